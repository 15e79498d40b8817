from scapy.all import Ether, IP, UDP, ARP, Raw
# Re-probing a stale neighbour. H1's ARP request for the router makes a STALE entry for H1 (neigh_event_ns);
# forwarding to H1 moves it to DELAY; after delay_first_probe_time (5 s) it goes to PROBE and the router
# sends ucast_solicit (3) requests 1 s apart to H1's known MAC. arp_solicit passes no target hardware
# address, so the ARP body's THA is zero although the Ethernet destination is H1. Unanswered, the entry
# fails at ~8 s. Nothing is sent after the third probe, and the window ends at ~10 s, well clear of the
# timers' slack (Linux's multi-second timers fire up to ~0.5 s late).
H1 = "02:00:00:00:e1:01"          # host on r1, learned from its ARP request (no static entry)
H2 = "02:00:00:00:e2:02"          # host on r2 (static neighbour)
R1, R2 = "02:00:00:00:06:01", "02:00:00:00:06:02"
SCENARIO = {
  "name": "router-neigh-probe",
  "device": "router",
  "router": {
    "neighbors": [{"ip": "198.18.62.2", "mac": H2, "dev": "r2"}],
  },
  "ports": [
    {"name": "r1", "mac": R1, "addresses": ["198.18.61.1/24"]},
    {"name": "r2", "mac": R2, "addresses": ["198.18.62.1/24"]},
  ],
  "steps": [
    {"port": "r1", "note": "H1: who-has 198.18.61.1: answered, H1 entered STALE",
     "frame": Ether(src=H1, dst="ff:ff:ff:ff:ff:ff") / ARP(op=1, hwsrc=H1, psrc="198.18.61.2", pdst="198.18.61.1"),
     "gap_s": 0.2},
    {"port": "r2", "note": "H2 -> H1: forwarded to H1's MAC at once, entry STALE -> DELAY; probes at ~5, 6, 7 s",
     "frame": Ether(src=H2, dst=R2) / IP(src="198.18.62.2", dst="198.18.61.2", id=0x3131) /
              UDP(sport=4000, dport=4001) / Raw(b"q" * 24)},
    {"advance_s": 9},
  ],
  "settle_s": 1.0,
}
