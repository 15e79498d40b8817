from scapy.all import Ether, IP, UDP, IPv6, Raw, Padding
# Recorded on a host with br_netfilter loaded, so bridge-nf-call-iptables/ip6tables were 1 in the DUT
# namespace: bridged IPv4/IPv6 frames are validated and their Ethernet padding is trimmed.
A, B = "02:00:00:00:2a:01", "02:00:00:00:2b:02"
def s(port, note, frame):
    return {"port": port, "note": note, "frame": frame}
SCENARIO = {
  "name": "bridge-netfilter", "device": "bridge",
  "bridge": {"mac": "02:00:00:00:00:fb", "ageing_time_s": 300, "stp": False, "multicast_snooping": False,
             "sysctl": {"net.bridge.bridge-nf-call-iptables": 1, "net.bridge.bridge-nf-call-ip6tables": 1}},
  "ports": [{"name": "p1", "mac": "02:00:00:00:2c:01"}, {"name": "p2", "mac": "02:00:00:00:2c:02"}],
  "steps": [
    s("p2", "B learned on p2", Ether(src=B, dst=A) / IP(src="198.18.9.2", dst="198.18.9.1") / UDP(sport=2, dport=1) / Raw(b"learn" * 4)),
    s("p1", "padded IPv4 (total length 30 in a 60-byte frame): forwarded trimmed", Ether(src=A, dst=B) / IP(src="198.18.9.1", dst="198.18.9.2") / UDP(sport=1, dport=2) / Raw(b"ab") / Padding(b"\0" * 16)),
    s("p1", "IPv4 with a bad header checksum: dropped", Ether(src=A, dst=B) / IP(src="198.18.9.1", dst="198.18.9.2", chksum=0x1234) / UDP(sport=1, dport=2) / Raw(b"c" * 30)),
    s("p1", "IPv4 total length beyond the frame: dropped", Ether(src=A, dst=B) / IP(src="198.18.9.1", dst="198.18.9.2", len=200) / UDP(sport=1, dport=2) / Raw(b"d" * 30)),
    s("p1", "IPv4 with IHL 4: dropped", Ether(src=A, dst=B) / IP(src="198.18.9.1", dst="198.18.9.2", ihl=4) / Raw(b"e" * 40)),
    s("p1", "ethertype IPv6 but version 6 missing: dropped", Ether(src=A, dst=B, type=0x86dd) / Raw(b"6" * 60)),
    s("p1", "valid IPv6 with padding: forwarded trimmed", Ether(src=A, dst=B) / IPv6(src="fd00::1", dst="fd00::2", nh=59, plen=0) / Raw(b"\0" * 20)),
    s("p1", "non-IP ethertype, padded: untouched", Ether(src=A, dst=B, type=0x88b5) / Raw(b"z" * 46)),
    s("p1", "valid IPv4 unpadded: unchanged", Ether(src=A, dst=B) / IP(src="198.18.9.1", dst="198.18.9.2") / UDP(sport=1, dport=2) / Raw(b"f" * 100)),
  ],
}
