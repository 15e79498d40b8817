from scapy.all import (Ether, IPv6, IPv6ExtHdrHopByHop, RouterAlert, UDP, Raw, ICMPv6MLReport,
                       ICMPv6MLDone, ICMPv6EchoRequest, ICMPv6MLQuery2, ICMPv6MLReport2, ICMPv6MLDMultAddrRec)
# IPv6 multicast through a Linux bridge with multicast snooping on and Linux's other defaults: no querier of
# its own (multicast_querier 0), ports learn router ports from queries (multicast_router 1), every port floods
# unregistered multicast (multicast_flood on), MLDv1 snooping (multicast_mld_version 1). The bridge device has
# no IPv6 (the bridge baseline), so it joins no group and sends no report of its own.
#
# Before any query is heard, the bridge learns groups from reports but floods everything, reports included:
# it forwards by its group table only while a querier exists (another querier's timer is running) and the
# query's maximum response delay has passed since the first query. After that: a registered group goes to its
# member ports and the router port; unregistered multicast (also link-local groups other than ff02::1, and
# reports) to the router port only; ff02::1 is always flooded.
A, B, C, R = "02:00:00:00:2a:01", "02:00:00:00:2b:02", "02:00:00:00:2c:03", "02:00:00:00:2d:04"
A_LL, B_LL, C_LL, R_LL = "fe80::2a", "fe80::2b", "fe80::2c", "fe80::2d"
BR = "02:00:00:00:00:fd"
P = {n: f"02:00:00:00:0a:0{n}" for n in (1, 2, 3, 4)}
G1, G2, G3 = "ff05::db8:1", "ff05::db8:2", "ff05::db8:3"
MDNS = "ff02::fb"


def mcast_mac(group):
    """33:33 and the group's last 32 bits (RFC 2464)."""
    from socket import AF_INET6, inet_pton
    b = inet_pton(AF_INET6, group)[12:]
    return "33:33:" + ":".join(f"{x:02x}" for x in b)


def mld(src_mac, src, dst, msg):
    """An MLD message as a host sends it: hop limit 1, hop-by-hop header with a router alert (value 0)."""
    return (Ether(src=src_mac, dst=mcast_mac(dst)) / IPv6(src=src, dst=dst, hlim=1)
            / IPv6ExtHdrHopByHop(options=[RouterAlert(value=0)]) / msg)


def report2(src_mac, src, *records):
    return mld(src_mac, src, "ff02::16", ICMPv6MLReport2(records=[ICMPv6MLDMultAddrRec(rtype=t, dst=g)
                                                                  for t, g in records]))


def udp(src_mac, src, group, ch):
    return (Ether(src=src_mac, dst=mcast_mac(group)) / IPv6(src=src, dst=group, hlim=5)
            / UDP(sport=5000, dport=5001) / Raw(ch.encode() * 24))


def s(port, note, frame, gap=0.1):
    return {"port": port, "note": note, "frame": frame, "gap_s": gap}


CHANGE_TO_EXCLUDE, CHANGE_TO_INCLUDE = 4, 3
SCENARIO = {
  "name": "bridge-mld",
  "device": "bridge",
  "bridge": {"mac": BR, "ageing_time_s": 300, "stp": False, "multicast_snooping": True},
  "ports": [{"name": f"p{n}", "mac": P[n]} for n in (1, 2, 3, 4)],
  "steps": [
    s("p1", "MLDv2 report from A joining G1 (change to exclude {}): no querier, so flooded to p2,p3,p4",
      report2(A, A_LL, (CHANGE_TO_EXCLUDE, G1))),
    s("p2", "UDP to G1 (registered on p1) from B, no querier: flooded", udp(B, B_LL, G1, "1")),
    s("p2", "UDP to G2 (unregistered), no querier: flooded", udp(B, B_LL, G2, "2")),
    s("p3", "UDP to ff02::1: flooded", udp(C, C_LL, "ff02::1", "a")),
    s("p2", "UDP to ff02::fb, link-local, unregistered, no querier: flooded", udp(B, B_LL, MDNS, "m")),
    s("p4", "MLDv2 general query from R (max response 500 ms): flooded; p4 becomes a router port, a querier exists "
            "once 500 ms have passed",
      mld(R, R_LL, "ff02::1", ICMPv6MLQuery2(mrd=500, mladdr="::")), gap=0.1),
    s("p2", "UDP to G1 within the query's max response delay: still flooded", udp(B, B_LL, G1, "3"), gap=0.8),
    s("p2", "UDP to G1 with a querier: to p1 (member) and p4 (router port) only", udp(B, B_LL, G1, "4")),
    s("p2", "UDP to G2 (unregistered) with a querier: to the router port p4 only", udp(B, B_LL, G2, "5")),
    s("p3", "UDP to ff02::1 with a querier: flooded", udp(C, C_LL, "ff02::1", "b")),
    s("p2", "UDP to ff02::fb (link-local, unregistered) with a querier: router port p4 only", udp(B, B_LL, MDNS, "n")),
    s("p1", "MLDv2 report from A again: to the router port p4 only", report2(A, A_LL, (CHANGE_TO_EXCLUDE, G1))),
    s("p3", "MLDv1 report from C for G3: to the router port p4 only; G3 registered on p3",
      mld(C, C_LL, G3, ICMPv6MLReport(mladdr=G3))),
    s("p2", "UDP to G3: to p3 and p4", udp(B, B_LL, G3, "6")),
    s("p1", "UDP to G1 from A itself: to p4 only (the member port is the ingress)", udp(A, A_LL, G1, "7")),
    s("p3", "MLDv1 done from C for G3 (to ff02::2): to p4; another querier exists, so the bridge keeps G3 on p3",
      mld(C, C_LL, "ff02::2", ICMPv6MLDone(mladdr=G3))),
    s("p2", "UDP to G3 after the done: still to p3 and p4", udp(B, B_LL, G3, "8")),
    s("p1", "MLDv2 report from A leaving G1 (change to include {}): to p4; kept too (another querier exists)",
      report2(A, A_LL, (CHANGE_TO_INCLUDE, G1))),
    s("p2", "UDP to G1 after the leave: to p1 and p4", udp(B, B_LL, G1, "9")),
    s("p4", "UDP to G1 from the router port: to p1 only", udp(R, R_LL, G1, "r")),
    # Frames the snooping code finds broken (a bad MLD checksum, a query from a global source, an IPv6 header
    # that does not fit the frame) are dropped, whatever their destination.
    s("p2", "MLDv1 report for G2 with a bad checksum: dropped, G2 not registered",
      mld(B, B_LL, G2, ICMPv6MLReport(mladdr=G2, cksum=0x1234))),
    s("p2", "UDP to G2 after the bad report: still unregistered, to p4 only", udp(B, B_LL, G2, "x")),
    s("p3", "MLDv2 query from a global source (not link-local): dropped",
      mld(C, "2001:db8::2c", "ff02::1", ICMPv6MLQuery2(mrd=500, mladdr="::"))),
    s("p1", "unicast IPv6 to unknown D whose payload length runs past the frame: dropped",
      Ether(src=A, dst="02:00:00:00:2e:05") / IPv6(src="2001:db8::2a", dst="2001:db8::2e", hlim=64, plen=200, nh=59)
      / Raw(b"t" * 20)),
    s("p1", "unicast IPv6 to unknown D, well formed: flooded", Ether(src=A, dst="02:00:00:00:2e:05")
      / IPv6(src="2001:db8::2a", dst="2001:db8::2e", hlim=64, nh=59) / Raw(b"u" * 20)),
    s("p2", "IPv6 to G1 whose payload length runs past the frame", Ether(src=B, dst=mcast_mac(G1))
      / IPv6(src=B_LL, dst=G1, hlim=5, plen=200, nh=59) / Raw(b"v" * 20)),
    s("p2", "version 4 in an IPv6 ethertype frame to G1's MAC", Ether(src=B, dst=mcast_mac(G1), type=0x86dd)
      / Raw(b"\x45" + b"w" * 59)),
    s("p2", "ICMPv6 echo request with a hop-by-hop header to G2 (ICMPv6 but not MLD)", Ether(src=B, dst=mcast_mac(G2))
      / IPv6(src=B_LL, dst=G2, hlim=5) / IPv6ExtHdrHopByHop(options=[RouterAlert(value=0)])
      / ICMPv6EchoRequest(id=7, seq=1, data=b"e" * 8)),
    s("p2", "UDP to G1 again: to p1 and p4", udp(B, B_LL, G1, "z")),
  ],
}
