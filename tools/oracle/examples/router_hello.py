# A first scenario: a two-port IPv4 router forwarding, expiring, answering echo and ARP.
# Record it as Linux with: sudo ./usnet oracle record tools/oracle/examples/router_hello.py /tmp/router-hello
from scapy.all import ARP, ICMP, IP, UDP, Ether, Raw

H1, H2 = "02:00:00:00:c1:01", "02:00:00:00:c2:02"   # the hosts on each side (static neighbours)
R1, R2 = "02:00:00:00:c0:01", "02:00:00:00:c0:02"   # the router's ports


def from_h1(**ip):
    return Ether(src=H1, dst=R1) / IP(src="198.18.41.2", **ip)


SCENARIO = {
    "name": "router-hello",
    "device": "router",
    "ports": [
        {"name": "r1", "mac": R1, "addresses": ["198.18.41.1/24"]},
        {"name": "r2", "mac": R2, "addresses": ["198.18.42.1/24"]},
    ],
    "router": {
        "routes": ["198.18.43.0/24 via 198.18.42.2 dev r2"],
        "neighbors": [{"ip": "198.18.41.2", "mac": H1, "dev": "r1"},
                      {"ip": "198.18.42.2", "mac": H2, "dev": "r2"}],
    },
    "steps": [
        {"port": "r1", "note": "forwarded to r2, TTL 64 -> 63",
         "frame": from_h1(dst="198.18.42.2") / UDP(sport=1000, dport=2000) / Raw(b"hello")},
        {"port": "r1", "note": "forwarded by the route via 198.18.42.2",
         "frame": from_h1(dst="198.18.43.9", ttl=9) / UDP(sport=1001, dport=2001) / Raw(b"routed")},
        {"port": "r1", "note": "TTL 1: time exceeded back to H1",
         "frame": from_h1(dst="198.18.42.2", ttl=1) / UDP(sport=1002, dport=33434) / Raw(b"x" * 12)},
        {"port": "r1", "note": "echo request to the router: echo reply",
         "frame": from_h1(dst="198.18.41.1") / ICMP(type=8, id=1, seq=1) / Raw(b"ping")},
        {"port": "r2", "note": "ARP who-has 198.18.42.1: reply", "gap_s": 0.1,
         "frame": Ether(src=H2, dst="ff:ff:ff:ff:ff:ff") / ARP(op=1, hwsrc=H2, psrc="198.18.42.2", pdst="198.18.42.1")},
    ],
    "settle_s": 0.5,
}
