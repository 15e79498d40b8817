from scapy.all import (Ether, IPv6, UDP, Raw, ICMPv6ND_NS, ICMPv6ND_NA, ICMPv6NDOptSrcLLAddr,
                       ICMPv6NDOptDstLLAddr)
from scapy.utils6 import in6_mactoifaceid, in6_getnsma, in6_getnsmac
from socket import AF_INET6, inet_ntop, inet_pton
# Neighbour discovery on an IPv6 router. H2 (on r2) is a static neighbour; H1 and H3 (on r1) are learned.
# r1's NUD timers are shortened and fixed so every transition lands in a window of its own:
#   base_reachable_time 4 s  -> an entry stays REACHABLE a random 2..6 s after it was confirmed;
#   delay_first_probe_time 1 s, retrans_time 1 s, ucast_solicit 3, mcast_solicit 3 (the defaults).
# A REACHABLE entry that expires while its last use is older than delay_first_probe_time goes STALE silently;
# the next packet to it is forwarded at once to the cached MAC and moves it to DELAY, 1 s later to PROBE:
# three unicast NS 1 s apart to the cached MAC, then FAILED. Linux's timers fire up to ~0.5 s late, so each
# window below leaves at least that much room.
H1, H2, H3, H3B = "02:00:00:00:81:0a", "02:00:00:00:82:0b", "02:00:00:00:81:0c", "02:00:00:00:81:0d"
R1, R2 = "02:00:00:00:80:01", "02:00:00:00:80:02"
R1_GLOBAL, H1_GLOBAL, H3_GLOBAL = "2001:db8:81::1", "2001:db8:81::2", "2001:db8:81::3"
GW, GW_GLOBAL = "02:00:00:00:81:09", "2001:db8:81::9"   # a gateway on r1, learned


def link_local(mac):
    return "fe80::" + in6_mactoifaceid(mac)


def solicited_node(addr):
    return inet_ntop(AF_INET6, in6_getnsma(inet_pton(AF_INET6, addr)))


H1_LL, R1_LL = link_local(H1), link_local(R1)


def h2_to(dst, sport, payload):
    return Ether(src=H2, dst=R2) / IPv6(src="2001:db8:82::2", dst=dst) / UDP(sport=sport, dport=7000) / Raw(payload)


def ns(src_mac, src, target, hlim=255, with_slla=True):
    frame = (Ether(src=src_mac, dst=in6_getnsmac(inet_pton(AF_INET6, solicited_node(target)))) /
             IPv6(src=src, dst=solicited_node(target), hlim=hlim) / ICMPv6ND_NS(tgt=target))
    return frame / ICMPv6NDOptSrcLLAddr(lladdr=src_mac) if with_slla else frame


def na(src_mac, src, dst, dst_mac, target, solicited, override=1):
    return (Ether(src=src_mac, dst=dst_mac) / IPv6(src=src, dst=dst, hlim=255) /
            ICMPv6ND_NA(tgt=target, R=0, S=solicited, O=override) / ICMPv6NDOptDstLLAddr(lladdr=src_mac))


SCENARIO = {
  "name": "router6-ndisc",
  "device": "router",
  "router": {
    "routes": ["2001:db8:83::/64 via 2001:db8:81::9 dev r1"],
    "neighbors": [{"ip": "2001:db8:82::2", "mac": H2, "dev": "r2"}],
  },
  "ports": [
    {"name": "r1", "mac": R1, "addresses": [R1_GLOBAL + "/64"],
     "sysctl": {"neigh6.base_reachable_time_ms": 4000, "neigh6.delay_first_probe_time": 1,
                "neigh6.retrans_time_ms": 1000, "neigh6.ucast_solicit": 3, "neigh6.mcast_solicit": 3}},
    {"name": "r2", "mac": R2, "addresses": ["2001:db8:82::1/64"]},
  ],
  "steps": [
    {"port": "r2", "note": "H2 -> H1, no neighbour entry: queued; NS for H1 out r1 to its solicited-node "
                           "multicast ff02::1:ff00:2 (33:33:ff:00:00:02), hop limit 255, with r1's MAC as SLLA",
     "frame": h2_to(H1_GLOBAL, 7001, b"1" * 16), "gap_s": 0.2},
    {"port": "r1", "note": "H1's solicited NA: entry REACHABLE, the queued packet forwarded to H1 (hop limit 63)",
     "frame": na(H1, H1_GLOBAL, R1_GLOBAL, R1, H1_GLOBAL, solicited=1), "gap_s": 0.1},
    {"port": "r1", "note": "NS from H1 for 2001:db8:81::1: solicited NA to H1, flags router+solicited+override, "
                           "target link-layer address R1",
     "frame": ns(H1, H1_GLOBAL, R1_GLOBAL)},
    {"port": "r1", "note": "NS with hop limit 254 (must be 255): ignored",
     "frame": ns(H1, H1_GLOBAL, R1_GLOBAL, hlim=254)},
    {"port": "r1", "note": "NS for 2001:db8:81::77, not the router's: ignored (no proxy NDP)",
     "frame": ns(H1, H1_GLOBAL, "2001:db8:81::77")},
    {"port": "r1", "note": "DAD NS (source ::, no SLLA) for 2001:db8:81::1: the router defends it with an NA "
                           "to ff02::1, router+override, not solicited",
     "frame": ns(H1, "::", R1_GLOBAL, with_slla=False)},
    {"port": "r1", "note": "unsolicited NA (override) from H3, which has no entry: ignored (accept_untracked_na 0)",
     "frame": na(H3, H3_GLOBAL, "ff02::1", "33:33:00:00:00:01", H3_GLOBAL, solicited=0)},
    {"port": "r2", "note": "H2 -> H3: still no entry, so NS for H3 out r1 (the unsolicited NA made none)",
     "frame": h2_to(H3_GLOBAL, 7002, b"3" * 16), "gap_s": 0.1},
    {"port": "r1", "note": "H3's solicited NA: the queued packet forwarded to H3, entry REACHABLE",
     "frame": na(H3, H3_GLOBAL, R1_GLOBAL, R1, H3_GLOBAL, solicited=1), "gap_s": 0.1},
    {"port": "r1", "note": "unsolicited NA from H3 with a new MAC (H3B) and override: entry takes H3B, STALE",
     "frame": na(H3B, H3_GLOBAL, "ff02::1", "33:33:00:00:00:01", H3_GLOBAL, solicited=0), "gap_s": 0.1},
    {"port": "r2", "note": "H2 -> H3: forwarded at once to H3B; STALE -> DELAY; at ~1.9 s PROBE: unicast NS to "
                           "H3B at ~1.9, 2.9, 3.9 s (target and IPv6 destination H3), FAILED at ~4.9 s",
     "frame": h2_to(H3_GLOBAL, 7003, b"4" * 16)},
    {"port": "r2", "note": "H2 -> 2001:db8:83::5, routed via gateway 2001:db8:81::9 with no entry: NS for the "
                           "gateway (not the destination) out r1",
     "frame": h2_to("2001:db8:83::5", 7006, b"7" * 16), "gap_s": 0.1},
    {"port": "r1", "note": "the gateway's solicited NA: the queued packet forwarded to GW's MAC; the entry later "
                           "goes STALE silently (never used again)",
     "frame": na(GW, GW_GLOBAL, R1_GLOBAL, R1, GW_GLOBAL, solicited=1)},
    {"advance_s": 5.9},
    {"port": "r2", "note": "t=7 s: H1's entry went REACHABLE -> STALE silently (at 2.2..6.2 s). H2 -> H1: forwarded "
                           "at once to H1; DELAY, then unicast NS to H1 at ~8, 9, 10 s; FAILED at ~11 s",
     "frame": h2_to(H1_GLOBAL, 7004, b"5" * 16)},
    {"advance_s": 5.5},
    {"port": "r2", "note": "t=12.5 s: H2 -> H1 again, entry FAILED: resolution starts over with multicast NS at "
                           "~12.5, 13.5, 14.5 s; unanswered, ICMPv6 destination unreachable code 3 (address "
                           "unreachable) to H2 at ~15.5 s, quoting the queued packet",
     "frame": h2_to(H1_GLOBAL, 7005, b"6" * 16)},
    {"advance_s": 3.5},
    {"port": "r1", "note": "t=16 s: NS from H1's link-local for r1's link-local: NA from r1's link-local, R+S+O. "
                           "The NS's SLLA made a STALE entry for H1's link-local and the NA used it: DELAY, then "
                           "unicast NS to it at ~17, 18, 19 s (kept last so these probes overlap no other timer)",
     "frame": ns(H1, H1_LL, R1_LL)},
    {"advance_s": 4.0},
  ],
  "settle_s": 0.5,
}
