from scapy.all import (Ether, IPv6, Raw, ICMPv6EchoRequest, ICMPv6ND_RA, ICMPv6ND_NA, ICMPv6ND_NS,
                       ICMPv6NDOptSrcLLAddr, ICMPv6NDOptDstLLAddr, ICMPv6NDOptPrefixInfo)
from scapy.utils6 import in6_mactoifaceid
# Duplicate address detection on the wire, for addresses a Linux host makes from router advertisements (SLAAC).
# The DUT is one port, h1, of a namespace that does not forward and accepts RAs; it went through DAD for its
# link-local and static addresses and sent its first router solicitation before the capture opened.
#   dad_transmits 2, and the RA's retrans timer 500 ms: two DAD probes 0.5 s apart, the address preferred 0.5 s
#   after the second;
#   router_solicitation_delay 0: DAD starts without Linux's random delay (below router_solicitation_delay);
#   enhanced_dad 0 (on h1 and on all): no random nonce in the probes;
#   ndisc_notify 1: an unsolicited NA for each address that passes DAD;
#   router_solicitation_interval 4 s (the default): the RA at 0.2 s comes before the second solicitation.
H1, RT, H2 = "02:00:00:00:91:01", "02:00:00:00:91:fe", "02:00:00:00:91:0b"


def link_local(mac):
    return "fe80::" + in6_mactoifaceid(mac)


H1_LL, RT_LL = link_local(H1), link_local(RT)
IID = in6_mactoifaceid(H1)                                   # ff:fe00:9101
A1, A2, A3 = "2001:db8:1::" + IID, "2001:db8:2::" + IID, "fd00:3::" + IID
FAR = "2001:db8:99::5"


def pio(prefix):
    return ICMPv6NDOptPrefixInfo(prefix=prefix, prefixlen=64, L=1, A=1, validlifetime=3600, preferredlifetime=1800)


def ra(*prefixes):
    frame = (Ether(src=RT, dst="33:33:00:00:00:01") / IPv6(src=RT_LL, dst="ff02::1", hlim=255) /
             ICMPv6ND_RA(chlim=64, routerlifetime=1800, reachabletime=0, retranstimer=500) /
             ICMPv6NDOptSrcLLAddr(lladdr=RT))
    for p in prefixes:
        frame = frame / pio(p)
    return frame


def echo(dst, seq):
    return (Ether(src=RT, dst=H1) / IPv6(src=FAR, dst=dst, hlim=60) /
            ICMPv6EchoRequest(id=0x4343, seq=seq) / Raw(b"dad-%02d" % seq))


SCENARIO = {
  "name": "host6-dad",
  "device": "router",
  "router": {
    "sysctl": {"net.ipv6.conf.all.forwarding": 0, "net.ipv6.conf.default.forwarding": 0,
               "net.ipv6.conf.all.enhanced_dad": 0},
  },
  "ports": [
    {"name": "h1", "mac": H1, "addresses": ["fd00:91::1/64"],
     "sysctl": {"ipv6.forwarding": 0, "ipv6.accept_ra": 1, "ipv6.accept_dad": 1, "ipv6.enhanced_dad": 0,
                "ipv6.dad_transmits": 2, "ipv6.ndisc_notify": 1, "ipv6.router_solicitation_delay": 0,
                "neigh6.delay_first_probe_time": 60}},
  ],
  "steps": [
    {"port": "h1", "note": "t=0: an RA (retrans timer 500 ms) with three autonomous prefixes: three SLAAC "
                           "addresses, tentative, each with its first DAD NS at once, from :: to its "
                           "solicited-node group (one group, ff02::1:ff00:9101, for all three: the same "
                           "interface identifier), in the RA's order",
     "frame": ra("2001:db8:1::", "2001:db8:2::", "fd00:3::"), "gap_s": 0.2},
    {"port": "h1", "note": "t=0.2 s: another node defends 2001:db8:2::ff:fe00:9101 (an NA to ff02::1, override): "
                           "DAD fails, the address (SLAAC, not permanent) is deleted: no second probe for it",
     "frame": (Ether(src=H2, dst="33:33:00:00:00:01") / IPv6(src=A2, dst="ff02::1", hlim=255) /
               ICMPv6ND_NA(tgt=A2, R=0, S=0, O=1) / ICMPv6NDOptDstLLAddr(lladdr=H2)), "gap_s": 0.1},
    {"port": "h1", "note": "t=0.3 s: another node probes for fd00:3::ff:fe00:9101 too (a DAD NS from ::): "
                           "DAD fails for it as well. At ~0.5 s the second probe for 2001:db8:1::ff:fe00:9101 "
                           "only; at ~1.0 s it is preferred and an unsolicited NA for it goes to ff02::1 "
                           "(override, no router flag, with the target's link-layer address)",
     "frame": (Ether(src=H2, dst="33:33:ff:00:91:01") / IPv6(src="::", dst="ff02::1:ff00:9101", hlim=255) /
               ICMPv6ND_NS(tgt=A3)), "gap_s": 1.2},
    {"port": "h1", "note": "t=1.5 s: echo request to 2001:db8:1::ff:fe00:9101: replied via the router",
     "frame": echo(A1, 1), "gap_s": 0.1},
    {"port": "h1", "note": "t=1.6 s: echo request to 2001:db8:2::ff:fe00:9101, whose DAD failed: not ours, "
                           "not forwarded, no reply",
     "frame": echo(A2, 2), "gap_s": 0.1},
    {"port": "h1", "note": "t=1.7 s: an NS for 2001:db8:2::ff:fe00:9101 from the router: unanswered",
     "frame": (Ether(src=RT, dst="33:33:ff:00:91:01") / IPv6(src=RT_LL, dst="ff02::1:ff00:9101", hlim=255) /
               ICMPv6ND_NS(tgt=A2) / ICMPv6NDOptSrcLLAddr(lladdr=RT)), "gap_s": 0.3},
    {"port": "h1", "note": "t=2.0 s: the RA again with 2001:db8:2::/64 only: the deleted address is made again, "
                           "DAD again: probes at ~2.0 and ~2.5 s, the unsolicited NA at ~3.0 s",
     "frame": ra("2001:db8:2::"), "gap_s": 1.5},
    {"port": "h1", "note": "t=3.5 s: echo request to 2001:db8:2::ff:fe00:9101: now replied",
     "frame": echo(A2, 3), "gap_s": 0.1},
    {"port": "h1", "note": "t=3.6 s: a DAD NS from another node for 2001:db8:1::ff:fe00:9101, which is "
                           "preferred: h1 defends it with an NA to ff02::1 (override, not solicited)",
     "frame": (Ether(src=H2, dst="33:33:ff:00:91:01") / IPv6(src="::", dst="ff02::1:ff00:9101", hlim=255) /
               ICMPv6ND_NS(tgt=A1))},
  ],
  "settle_s": 0.5,
}
