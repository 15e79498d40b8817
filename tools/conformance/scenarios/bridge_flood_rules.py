from scapy.all import Ether, IP, IPv6, UDP, ARP, Raw
# Flooding and link-local rules of a Linux bridge (br_handle_frame, group_fwd_mask 0, STP off, snooping off).
A, B, C, D = "02:00:00:00:1a:01", "02:00:00:00:1b:02", "02:00:00:00:1c:03", "02:00:00:00:1d:04"
E, F, G, H = "02:00:00:00:1e:05", "02:00:00:00:1f:06", "02:00:00:00:10:07", "02:00:00:00:11:08"
BR = "02:00:00:00:00:fc"
P = {n: f"02:00:00:00:09:0{n}" for n in (1, 2, 3, 4)}
BC = "ff:ff:ff:ff:ff:ff"
def udp(src, dst, n, ch):
    return Ether(src=src, dst=dst) / IP(src="198.18.9.1", dst="198.18.9.2") / UDP(sport=6000, dport=7000) / Raw(ch.encode() * n)
def raw(src, dst, etype, n, ch):
    return Ether(src=src, dst=dst, type=etype) / Raw(ch.encode() * n)
def s(port, note, frame):
    return {"port": port, "note": note, "frame": frame}
SCENARIO = {
  "name": "bridge-flood-rules",
  "device": "bridge",
  "bridge": {"mac": BR, "ageing_time_s": 300, "stp": False, "multicast_snooping": False},
  "ports": [{"name": f"p{n}", "mac": P[n]} for n in (1, 2, 3, 4)],
  "steps": [
    s("p1", "broadcast ARP from A: flooded to p2,p3,p4; A learned on p1",
      Ether(src=A, dst=BC) / ARP(op=1, hwsrc=A, psrc="198.18.9.1", pdst="198.18.9.2")),
    s("p2", "IPv4 multicast 01:00:5e:7f:00:01 from B: flooded to p1,p3,p4",
      Ether(src=B, dst="01:00:5e:7f:00:01") / IP(src="198.18.9.2", dst="239.255.0.1", ttl=1) / UDP(sport=1, dport=2) / Raw(b"m" * 30)),
    # NB: the oracle host has br_netfilter active (net.bridge.bridge-nf-call-ip6tables=1), which drops IPv6 frames with
    # an invalid header and trims bytes past the IP length, so this must be a well-formed IPv6 packet with no padding.
    s("p3", "IPv6 multicast 33:33:00:00:00:01 (ff02::1) from C: flooded",
      Ether(src=C, dst="33:33:00:00:00:01") / IPv6(src="fe80::1c", dst="ff02::1", nh=59, hlim=1) / Raw(b"6" * 20)),
    s("p1", "A -> unknown D: flooded to p2,p3,p4", udp(A, D, 40, "u")),
    s("p4", "LACP (01:80:c2:00:00:02, slow protocols): not forwarded, but E is learned on p4",
      raw(E, "01:80:c2:00:00:02", 0x8809, 110, "\x01")),
    s("p1", "A -> E: E was learned from the LACP frame, so only p4", udp(A, E, 41, "e")),
    s("p3", "802.1X EAPOL (01:80:c2:00:00:03): not forwarded, F learned on p3",
      raw(F, "01:80:c2:00:00:03", 0x888e, 46, "x")),
    s("p1", "A -> F: only p3", udp(A, F, 42, "f")),
    s("p2", "PAUSE (01:80:c2:00:00:01): dropped before learning, G not learned",
      raw(G, "01:80:c2:00:00:01", 0x8808, 46, "\x00")),
    s("p1", "A -> G: unknown, flooded", udp(A, G, 43, "g")),
    s("p2", "01:80:c2:00:00:0f (reserved link-local): not forwarded, H learned on p2",
      raw(H, "01:80:c2:00:00:0f", 0x88b5, 46, "r")),
    s("p1", "A -> H: only p2", udp(A, H, 44, "h")),
    s("p3", "01:80:c2:00:00:10 (outside the link-local block): ordinary multicast, flooded",
      raw(C, "01:80:c2:00:00:10", 0x88b5, 46, "t")),
    s("p4", "01:80:c2:00:00:21 (GVRP): ordinary multicast, flooded", raw(E, "01:80:c2:00:00:21", 0x88b5, 46, "v")),
    s("p1", "broadcast with source = the bridge's own MAC: forwarded (fdb entry is local: warning, no learning)",
      udp(BR, BC, 45, "o")),
    s("p2", "unicast to the bridge's MAC: delivered to br0 only, not forwarded", udp(B, BR, 46, "l")),
    s("p3", "broadcast with source = port p2's MAC (also a local fdb entry): forwarded, not learned",
      udp(P[2], BC, 47, "q")),
    s("p1", "unicast to port p2's MAC: local, not forwarded", udp(A, P[2], 48, "w")),
    s("p4", "unicast to port p4's own MAC arriving on p4: local, not forwarded", udp(E, P[4], 49, "y")),
    s("p2", "B -> A known on p1: only p1", udp(B, A, 50, "k")),
  ],
}
