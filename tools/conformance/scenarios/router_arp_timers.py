from scapy.all import Ether, IP, UDP, ICMP, ARP, Raw
# Neighbour resolution timers on a router: unresolved next hops are solicited with 3 broadcast ARP
# requests 1 s apart (mcast_probes=3, retrans_time=1 s); at ~3 s the entry goes FAILED and every queued
# packet is answered with ICMP host unreachable (arp_error_report -> ipv4_link_failure).
# Distinct unresolved destinations start >= 0.4 s apart so that timer-wheel slack (up to ~64 ms per
# 1 s timer) cannot reorder the requests on r2.
H1 = "02:00:00:00:d1:01"          # sender host on r1 (static neighbour)
T60 = "02:00:00:00:d2:60"         # tester answering for 198.19.2.60 on r2
T70 = "02:00:00:00:d2:70"         # tester 198.19.2.70 on r2 (pings the router)
R1, R2 = "02:00:00:00:05:01", "02:00:00:00:05:02"
def udp(dst, sport, n, tag):
    return (Ether(src=H1, dst=R1) / IP(src="198.19.1.2", dst=dst, id=0x1000 + sport) /
            UDP(sport=sport, dport=7000) / Raw(tag.encode() * n))
SCENARIO = {
  "name": "router-arp-timers",
  "device": "router",
  "router": {
    "routes": ["198.19.9.0/24 via 198.19.2.99 dev r2"],
    "neighbors": [{"ip": "198.19.1.2", "mac": H1, "dev": "r1"}],
  },
  "ports": [
    {"name": "r1", "mac": R1, "addresses": ["198.19.1.1/24"]},
    {"name": "r2", "mac": R2, "addresses": ["198.19.2.1/24"]},
  ],
  "steps": [
    {"port": "r1", "note": "to 198.19.2.50 (connected, no neighbour): queued, broadcast who-has .50 tell 198.19.2.1",
     "frame": udp("198.19.2.50", 1, 40, "a")},
    {"port": "r1", "note": "second packet to .50 while INCOMPLETE: queued, no extra request",
     "frame": udp("198.19.2.50", 2, 41, "b"), "gap_s": 0.4},
    {"port": "r1", "note": "to 198.19.2.60: queued, who-has .60",
     "frame": udp("198.19.2.60", 3, 42, "c"), "gap_s": 0.3},
    {"port": "r2", "note": "unicast ARP reply .60 is-at T60: queued packet forwarded to T60",
     "frame": Ether(src=T60, dst=R2) / ARP(op=2, hwsrc=T60, psrc="198.19.2.60", hwdst=R2, pdst="198.19.2.1"),
     "gap_s": 0.1},
    {"port": "r1", "note": "to .60 again: REACHABLE, forwarded at once",
     "frame": udp("198.19.2.60", 4, 43, "d"), "gap_s": 0.6},
    {"port": "r1", "note": "to 198.19.9.9 via unresolved gateway 198.19.2.99: who-has .99 x3, then host unreachable",
     "frame": udp("198.19.9.9", 5, 44, "e")},
    {"advance_s": 5},
    {"port": "r1", "note": "to .50 after its entry FAILED: resolution restarts (3 more requests, then host unreachable)",
     "frame": udp("198.19.2.50", 6, 45, "f"), "gap_s": 0.4},
    {"port": "r2", "note": "echo request from 198.19.2.70 (no neighbour) to 198.19.1.1: the reply needs ARP; "
                           "arp_announce=0 uses the queued packet's local source 198.19.1.1 as ARP sender IP",
     "frame": Ether(src=T70, dst=R2) / IP(src="198.19.2.70", dst="198.19.1.1", id=0x2222) / ICMP(type=8, id=0x77, seq=1) / Raw(b"P" * 32),
     "gap_s": 0.3},
    {"port": "r2", "note": "ARP reply .70 is-at T70: echo reply sent",
     "frame": Ether(src=T70, dst=R2) / ARP(op=2, hwsrc=T70, psrc="198.19.2.70", hwdst=R2, pdst="198.19.1.1")},
  ],
  # a trailing advance_s is not visible in in/*.pcap; the fixture format only knows settle_s after the last input
  "settle_s": 5.0,
}
