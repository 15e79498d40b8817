from scapy.all import Ether, IP, UDP, Raw
# A bridge with ageing_time 0 is a hub: br_fdb_update returns before learning when the hold time is 0, so
# no source is ever learned and every unicast frame is flooded to every other port.
A, B, C = "02:00:00:00:0a:21", "02:00:00:00:0b:22", "02:00:00:00:0c:23"
def udp(src, dst, n, sport):
    return (Ether(src=src, dst=dst) / IP(src="198.18.3.1", dst="198.18.3.2") /
            UDP(sport=sport, dport=2000) / Raw(b"z" * n))
SCENARIO = {
  "name": "bridge-ageing-zero",
  "device": "bridge",
  "bridge": {"mac": "02:00:00:00:00:fc", "ageing_time_s": 0, "stp": False, "multicast_snooping": False},
  "ports": [{"name": "p1", "mac": "02:00:00:00:03:01"}, {"name": "p2", "mac": "02:00:00:00:03:02"},
            {"name": "p3", "mac": "02:00:00:00:03:03"}],
  "steps": [
    {"port": "p2", "note": "B -> A: A unknown, flooded to p1 and p3 (B not learned)", "frame": udp(B, A, 64, 1)},
    {"port": "p1", "note": "A -> B: B was seen on p2 but not learned, flooded to p2 and p3", "frame": udp(A, B, 64, 2)},
    {"port": "p3", "note": "C -> A: flooded to p1 and p2", "frame": udp(C, A, 65, 3)},
    {"port": "p2", "note": "B -> A again: still flooded", "frame": udp(B, A, 66, 4), "gap_s": 0.5},
    {"port": "p1", "note": "A -> B again, half a second later: still flooded", "frame": udp(A, B, 67, 5)},
  ],
  "settle_s": 0.5,
}
