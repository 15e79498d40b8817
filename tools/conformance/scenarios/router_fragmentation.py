from scapy.all import Ether, IP, UDP, Raw, IPOption_RR, IPOption_Router_Alert
# Forwarding fragmentation (ip_forward -> ip_fragment -> ip_do_fragment slow path).
# r2 has MTU 576 ((576-20)&~7 = 552 data bytes per fragment), r3 has MTU 1280 (1256).
H1, H2, H3 = "02:00:00:00:f1:01", "02:00:00:00:f2:02", "02:00:00:00:f3:03"
R1, R2, R3 = "02:00:00:00:07:01", "02:00:00:00:07:02", "02:00:00:00:07:03"
SRC = "198.19.20.2"
def dgram(dst, total, ident, ch, flags=0, options=None, sport=4000):
    """UDP datagram of exactly `total` bytes of IP."""
    ip = IP(src=SRC, dst=dst, id=ident, flags=flags, options=options or [])
    hl = len(bytes(ip))
    return Ether(src=H1, dst=R1) / ip / UDP(sport=sport, dport=9000) / Raw(ch.encode() * (total - hl - 8))
# an original 2676-byte-payload UDP datagram (id 0x7777) cut by a previous hop into 1176 + 800 + 700
_orig = bytes(IP(src=SRC, dst="198.19.21.2", id=0x7777) / UDP(sport=4100, dport=9000) / Raw(bytes(range(256)) * 10 + b"Z" * 108))[20:]
assert len(_orig) == 2676
def frag(off, n, mf, options=None):
    return (Ether(src=H1, dst=R1) / IP(src=SRC, dst="198.19.21.2", id=0x7777, proto=17, flags="MF" if mf else 0,
                                       frag=off // 8, options=options or []) / Raw(_orig[off:off + n]))
SCENARIO = {
  "name": "router-fragmentation",
  "device": "router",
  "router": {
    "routes": [],
    "neighbors": [{"ip": SRC, "mac": H1, "dev": "r1"}, {"ip": "198.19.21.2", "mac": H2, "dev": "r2"},
                  {"ip": "198.19.22.2", "mac": H3, "dev": "r3"}],
  },
  "ports": [
    {"name": "r1", "mac": R1, "addresses": ["198.19.20.1/24"]},
    {"name": "r2", "mac": R2, "addresses": ["198.19.21.1/24"], "mtu": 576},
    {"name": "r3", "mac": R3, "addresses": ["198.19.22.1/24"], "mtu": 1280},
  ],
  "steps": [
    {"port": "r1", "note": "577 bytes to MTU 576: fragments 552 + 5 data bytes", "frame": dgram("198.19.21.2", 577, 0x0101, "a")},
    {"port": "r1", "note": "576 bytes: fits, not fragmented", "frame": dgram("198.19.21.2", 576, 0x0102, "b")},
    {"port": "r1", "note": "1000 bytes: 552 + 428", "frame": dgram("198.19.21.2", 1000, 0x0103, "c")},
    {"port": "r1", "note": "1500 bytes: 552 + 552 + 376", "frame": dgram("198.19.21.2", 1500, 0x0104, "d")},
    {"port": "r1", "note": "1500 bytes out r3 (MTU 1280): 1256 + 224", "frame": dgram("198.19.22.2", 1500, 0x0105, "e")},
    {"port": "r1", "note": "1500 bytes with record-route (hlen 36): 536-byte fragments; RR filled in the first, "
                           "replaced by NOPs in the later ones (not a copied option)",
     "frame": dgram("198.19.21.2", 1500, 0x0106, "f", options=[IPOption_RR(pointer=4, routers=["0.0.0.0"] * 3)])},
    {"port": "r1", "note": "router alert (copied) + record route: later fragments keep RA, RR -> NOPs",
     "frame": dgram("198.19.21.2", 1200, 0x0107, "g",
                    options=[IPOption_Router_Alert(), IPOption_RR(pointer=4, routers=["0.0.0.0"] * 2)])},
    {"port": "r1", "note": "already a first fragment (MF, 1176 data) > MTU: re-fragmented, every piece keeps MF",
     "frame": frag(0, 1176, True)},
    {"port": "r1", "note": "middle fragment (offset 1176, MF, 800 data): offsets continue from 147, all MF",
     "frame": frag(1176, 800, True)},
    {"port": "r1", "note": "last fragment (offset 1976, no MF, 700 data): only its last piece lacks MF",
     "frame": frag(1976, 700, False)},
    {"port": "r1", "note": "middle fragment carrying record-route: not a first fragment, so its pieces all keep RR",
     "frame": frag(1176, 800, True, options=[IPOption_RR(pointer=4, routers=["0.0.0.0"] * 3)])},
    {"port": "r1", "note": "DF, 577 bytes: ICMP frag needed (mtu 576) back to r1", "frame": dgram("198.19.21.2", 577, 0x0108, "h", flags="DF")},
    {"port": "r1", "note": "DF, 576 bytes: forwarded", "frame": dgram("198.19.21.2", 576, 0x0109, "i", flags="DF")},
    {"port": "r1", "note": "DF, 1400 bytes to r3: ICMP frag needed (mtu 1280)", "frame": dgram("198.19.22.2", 1400, 0x010a, "j", flags="DF")},
    {"port": "r1", "note": "DF, 1500 bytes with RR to r2: frag needed; the error quotes the datagram incl. options",
     "frame": dgram("198.19.21.2", 1500, 0x010b, "k", flags="DF", options=[IPOption_RR(pointer=4, routers=["0.0.0.0"] * 3)])},
  ],
}
