from scapy.all import Ether, IP, TCP, UDP, Raw
# A stateful forward filter: policy drop, replies and related packets pass, new connections only from the
# inside port r1, invalid packets counted and dropped. nf_conntrack_tcp_loose is 0, so a TCP segment other
# than a SYN cannot start tracking (with the default 1 a lone ACK would be picked up as a new connection);
# window tracking is strict (tcp_be_liberal 0). What each step shows is in its note; the rule counters and
# the table at the end are in linux/.
R1, R2 = "02:00:00:00:27:11", "02:00:00:00:27:12"       # the router: r1 inside, r2 outside
H2 = "02:00:00:00:a1:12"                                 # inside host 198.18.1.2
S = "02:00:00:00:b2:12"                                  # outside host 198.19.2.2
IN2, SRV = "198.18.1.2", "198.19.2.2"

NFT = """table ip filter {
    chain forward {
        type filter hook forward priority filter ; policy drop ;
        ct state established,related accept
        ct state invalid counter drop
        ct state new iifname "r1" counter accept
        counter
    }
}
"""


def from_inside(ident, l4):
    return Ether(src=H2, dst=R1) / IP(src=IN2, dst=SRV, id=ident) / l4


def from_outside(ident, l4):
    return Ether(src=S, dst=R2) / IP(src=SRV, dst=IN2, id=ident) / l4


def tcp(sport, dport, flags, seq, ack=0, data=b"", win=64240):
    t = TCP(sport=sport, dport=dport, flags=flags, seq=seq, ack=ack, window=win)
    return t / Raw(data) if data else t


SCENARIO = {
  "name": "ct-stateful-forward",
  "device": "router",
  "router": {
    "neighbors": [{"ip": IN2, "mac": H2, "dev": "r1"}, {"ip": SRV, "mac": S, "dev": "r2"}],
    "sysctl": {
      "net.netfilter.nf_conntrack_tcp_loose": 0,
      "net.netfilter.nf_conntrack_tcp_be_liberal": 0,
      "net.netfilter.nf_conntrack_tcp_ignore_invalid_rst": 0,
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
    {"port": "r1", "note": "SYN 198.18.1.2:33000 -> 198.19.2.2:443 from the inside: new, accepted, forwarded",
     "frame": from_inside(0x0101, tcp(33000, 443, "S", 1000))},
    {"port": "r2", "note": "SYN-ACK: a reply, established, forwarded",
     "frame": from_outside(0x0201, tcp(443, 33000, "SA", 5000, 1001, win=65160))},
    {"port": "r1", "note": "ACK: established, forwarded",
     "frame": from_inside(0x0102, tcp(33000, 443, "A", 1001, 5001))},
    {"port": "r1", "note": "data 100 bytes: forwarded",
     "frame": from_inside(0x0103, tcp(33000, 443, "PA", 1001, 5001, b"q" * 100))},
    {"port": "r2", "note": "data 50 bytes + ACK from the outside: forwarded",
     "frame": from_outside(0x0202, tcp(443, 33000, "PA", 5001, 1101, b"r" * 50, win=65160))},
    {"port": "r2", "note": "SYN 198.19.2.2:34000 -> 198.18.1.2:22 from the outside: new on r2, policy drop",
     "frame": from_outside(0x0203, tcp(34000, 22, "S", 9000))},
    {"port": "r1", "note": "ACK 198.18.1.2:35000 -> :80 with no connection: tcp_loose 0 makes it invalid, counted, dropped",
     "frame": from_inside(0x0104, tcp(35000, 80, "A", 4000, 4000))},
    {"port": "r2", "note": "data on the connection 1 MB beyond the receiver's window: invalid, counted, dropped",
     "frame": from_outside(0x0204, tcp(443, 33000, "PA", 5051 + 1_000_000, 1101, b"x" * 20, win=65160))},
    {"port": "r1", "note": "ACK of the outside's data: established, forwarded",
     "frame": from_inside(0x0105, tcp(33000, 443, "A", 1101, 5051))},
    {"port": "r2", "note": "RST at the expected sequence: in window, forwarded, the entry goes to CLOSE",
     "frame": from_outside(0x0205, tcp(443, 33000, "R", 5051, 0, win=0))},
    {"port": "r1", "note": "data on the closed connection: what Linux does with a segment on an entry in CLOSE",
     "frame": from_inside(0x0106, tcp(33000, 443, "PA", 1101, 5051, b"late"))},
    {"port": "r1", "note": "UDP 198.18.1.2:5353 -> 198.19.2.2:53 from the inside: new, accepted",
     "frame": from_inside(0x0107, UDP(sport=5353, dport=53) / Raw(b"question"))},
    {"port": "r2", "note": "UDP reply 53 -> 5353: established, forwarded",
     "frame": from_outside(0x0206, UDP(sport=53, dport=5353) / Raw(b"answer"))},
    {"port": "r2", "note": "UDP 53 -> 5354 (not a reply to anything): new on r2, policy drop",
     "frame": from_outside(0x0207, UDP(sport=53, dport=5354) / Raw(b"unasked"))},
  ],
  "settle_s": 1.0,
}
