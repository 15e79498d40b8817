from scapy.all import Ether, IP, TCP, UDP, Raw
# A connection tracking table that is full. nf_conntrack_max is 4; four TCP connections complete their
# handshakes, which makes their entries ASSURED. When a packet would make a fifth entry, Linux first tries to
# evict entries that are not ASSURED from the 8 hash buckets after the new tuple's; here there are none, so
# the packet is dropped before any hook after conntrack sees it (the forward chain's `ct state new` counter
# counts only the flows that got an entry). Packets of existing entries go on; an entry closed by a RST keeps
# its slot (it is ASSURED and waits out nf_conntrack_tcp_timeout_close), so the table stays full.
# nf_conntrack_max is machine-wide on Linux (read-only in a network namespace): the recorder sets it in the
# initial namespace for the length of the recording when USNET_ORACLE_HOST_CONNTRACK=1, and puts the old value
# back. With a maximum below 100 the garbage collector's own early drop (from 95% of the maximum, computed in
# whole percent) stays off, so nothing else frees a slot during the run.
# Not recorded: the eviction of unASSURED entries. Which entries it finds depends on the hash's random seed
# (the table has at least 512 buckets, nf_conntrack_buckets rounds up to a page, and only 8 are searched), so
# no run of it is repeatable.
R1, R2 = "02:00:00:00:27:41", "02:00:00:00:27:42"       # the router: r1 inside, r2 outside
H2 = "02:00:00:00:a1:42"                                 # inside host 198.18.1.2
S = "02:00:00:00:b2:42"                                  # outside server 198.19.2.2
IN2, SRV = "198.18.1.2", "198.19.2.2"

NFT = """table ip filter {
    chain forward {
        type filter hook forward priority filter ; policy accept ;
        ct state new counter
    }
}
"""

_ident = [0x4200]


def nid():
    _ident[0] += 1
    return _ident[0]


def udp_out(sport, data):
    return Ether(src=H2, dst=R1) / IP(src=IN2, dst=SRV, id=nid()) / UDP(sport=sport, dport=53) / Raw(data)


def udp_back(dport, data):
    return Ether(src=S, dst=R2) / IP(src=SRV, dst=IN2, id=nid()) / UDP(sport=53, dport=dport) / Raw(data)


def tcp_out(sport, flags, seq, ack=0, data=b""):
    t = Ether(src=H2, dst=R1) / IP(src=IN2, dst=SRV, id=nid()) / TCP(
        sport=sport, dport=80, flags=flags, seq=seq, ack=ack, window=64240)
    return t / Raw(data) if data else t


def tcp_back(dport, flags, seq, ack, data=b""):
    t = Ether(src=S, dst=R2) / IP(src=SRV, dst=IN2, id=nid()) / TCP(
        sport=80, dport=dport, flags=flags, seq=seq, ack=ack, window=65160 if "R" not in flags else 0)
    return t / Raw(data) if data else t


def handshake(sport, what):
    isn, sisn = sport * 10, sport * 20
    return [
        {"port": "r1", "note": f"{what}: SYN from 198.18.1.2:{sport}", "frame": tcp_out(sport, "S", isn)},
        {"port": "r2", "note": f"SYN-ACK to :{sport}", "frame": tcp_back(sport, "SA", sisn, isn + 1)},
        {"port": "r1", "note": f"ACK from :{sport}: handshake complete, entry ASSURED",
         "frame": tcp_out(sport, "A", isn + 1, sisn + 1)},
    ]


SCENARIO = {
  "name": "ct-table-full",
  "device": "router",
  "router": {
    "neighbors": [{"ip": IN2, "mac": H2, "dev": "r1"}, {"ip": SRV, "mac": S, "dev": "r2"}],
    "sysctl": {
      "net.netfilter.nf_conntrack_max": 4,
      "net.netfilter.nf_conntrack_tcp_loose": 1,
      "net.netfilter.nf_conntrack_tcp_timeout_syn_sent": 120,
      "net.netfilter.nf_conntrack_tcp_timeout_syn_recv": 60,
      "net.netfilter.nf_conntrack_tcp_timeout_established": 432000,
      "net.netfilter.nf_conntrack_tcp_timeout_close": 10,
      "net.netfilter.nf_conntrack_udp_timeout": 30,
      "net.netfilter.nf_conntrack_udp_timeout_stream": 120,
    },
    "nftables": NFT,
  },
  "ports": [
    {"name": "r1", "mac": R1, "addresses": ["198.18.1.1/24"]},
    {"name": "r2", "mac": R2, "addresses": ["198.19.2.1/24"]},
  ],
  "steps": [
    *handshake(2001, "TCP C, entry 1"),
    *handshake(2002, "TCP D, entry 2"),
    *handshake(2003, "TCP E, entry 3"),
    *handshake(2004, "TCP F, entry 4 (4 ASSURED entries: the table is full)"),
    {"port": "r1", "note": "UDP A 198.18.1.2:1001 -> 198.19.2.2:53: new, no room, nothing to evict: dropped",
     "frame": udp_out(1001, b"A1")},
    {"port": "r1", "note": "TCP G: SYN from :2005: dropped likewise", "frame": tcp_out(2005, "S", 20050)},
    {"port": "r2", "note": "UDP from the outside to 198.18.1.2:1002: new, dropped", "frame": udp_back(1002, b"B-unasked")},
    {"port": "r1", "note": "data on C: an existing entry, forwarded", "frame": tcp_out(2001, "PA", 20011, 40021, b"still here")},
    {"port": "r2", "note": "reply data on C: forwarded", "frame": tcp_back(2001, "PA", 40021, 20021, b"yes")},
    {"port": "r2", "note": "RST on D at the expected sequence: forwarded, D goes to CLOSE but keeps its slot",
     "frame": tcp_back(2002, "R", 40041, 0)},
    {"port": "r1", "note": "UDP A again: still no room: dropped", "frame": udp_out(1001, b"A2")},
    {"port": "r1", "note": "ACK of C's reply data: forwarded", "frame": tcp_out(2001, "A", 20021, 40024)},
  ],
  "settle_s": 1.0,
}
