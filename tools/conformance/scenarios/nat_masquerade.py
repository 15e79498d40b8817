from scapy.all import Ether, IP, TCP, UDP, ICMP, Raw
# Source NAT by masquerade on the outside port r2, with a two-port range so that port choice is deterministic:
# Linux searches a clashing source port's replacement from a random offset in the range, so with the range
# 40000-40001 and both inside hosts using source port (or ICMP echo id) 40000, the first flow keeps 40000 and
# the second can only get 40001. Replies to each translated port are un-NATed back to their host; a reply to
# a port with no entry is not translated (nft takes a port range only after a protocol match, hence a rule
# per protocol; for ICMP the range applies to the echo id) and reaches the router itself (TCP reset, ICMP port unreachable).
R1, R2 = "02:00:00:00:27:01", "02:00:00:00:27:02"       # the router: r1 inside, r2 outside
H2, H3 = "02:00:00:00:a1:02", "02:00:00:00:a1:03"       # inside hosts 198.18.1.2 and .3
S = "02:00:00:00:b2:02"                                  # outside server 198.19.2.2
IN2, IN3, SRV, PUB = "198.18.1.2", "198.18.1.3", "198.19.2.2", "198.19.2.1"
F, SYN, ACK, PA, FA = "F", "S", "A", "PA", "FA"

NFT = """table ip nat {
    chain postrouting {
        type nat hook postrouting priority srcnat ; policy accept ;
        oifname "r2" ip saddr 198.18.1.0/24 ip protocol tcp masquerade to :40000-40001
        oifname "r2" ip saddr 198.18.1.0/24 ip protocol udp masquerade to :40000-40001
        oifname "r2" ip saddr 198.18.1.0/24 ip protocol icmp masquerade to :40000-40001
    }
}
"""


def inside(mac, src, ident, l4):
    return Ether(src=mac, dst=R1) / IP(src=src, dst=SRV, id=ident) / l4


def outside(ident, l4):
    return Ether(src=S, dst=R2) / IP(src=SRV, dst=PUB, id=ident) / l4


def tcp_in(mac, src, ident, flags, seq, ack=0, data=b""):
    t = inside(mac, src, ident, TCP(sport=40000, dport=80, flags=flags, seq=seq, ack=ack, window=64240))
    return t / Raw(data) if data else t


def tcp_out(dport, ident, flags, seq, ack, data=b""):
    t = outside(ident, TCP(sport=80, dport=dport, flags=flags, seq=seq, ack=ack, window=65160))
    return t / Raw(data) if data else t


SCENARIO = {
  "name": "nat-masquerade",
  "device": "router",
  "router": {
    "neighbors": [{"ip": IN2, "mac": H2, "dev": "r1"}, {"ip": IN3, "mac": H3, "dev": "r1"},
                  {"ip": SRV, "mac": S, "dev": "r2"}],
    # The defaults, stated: the fixture's steps stay well inside every one of them.
    "sysctl": {
      "net.netfilter.nf_conntrack_tcp_loose": 1,
      "net.netfilter.nf_conntrack_tcp_timeout_syn_sent": 120,
      "net.netfilter.nf_conntrack_tcp_timeout_syn_recv": 60,
      "net.netfilter.nf_conntrack_tcp_timeout_established": 432000,
      "net.netfilter.nf_conntrack_tcp_timeout_fin_wait": 120,
      "net.netfilter.nf_conntrack_tcp_timeout_close_wait": 60,
      "net.netfilter.nf_conntrack_tcp_timeout_last_ack": 30,
      "net.netfilter.nf_conntrack_tcp_timeout_time_wait": 120,
      "net.netfilter.nf_conntrack_udp_timeout": 30,
      "net.netfilter.nf_conntrack_udp_timeout_stream": 120,
      "net.netfilter.nf_conntrack_icmp_timeout": 30,
    },
    "nftables": NFT,
  },
  "ports": [
    {"name": "r1", "mac": R1, "addresses": ["198.18.1.1/24"]},
    {"name": "r2", "mac": R2, "addresses": ["198.19.2.1/24"]},
  ],
  "steps": [
    # TCP: 198.18.1.2:40000 keeps port 40000
    {"port": "r1", "note": "TCP SYN 198.18.1.2:40000 -> 198.19.2.2:80: new, masqueraded to 198.19.2.1:40000 (port kept)",
     "frame": tcp_in(H2, IN2, 0x0201, SYN, 1000)},
    {"port": "r2", "note": "SYN-ACK to 198.19.2.1:40000: reply, un-NATed to 198.18.1.2:40000",
     "frame": tcp_out(40000, 0x0b01, "SA", 7000, 1001)},
    {"port": "r1", "note": "ACK from 198.18.1.2: established, source rewritten",
     "frame": tcp_in(H2, IN2, 0x0202, ACK, 1001, 7001)},
    # TCP: 198.18.1.3:40000 clashes and moves to 40001
    {"port": "r1", "note": "TCP SYN 198.18.1.3:40000 -> 198.19.2.2:80: 40000 is taken, masqueraded to 198.19.2.1:40001",
     "frame": tcp_in(H3, IN3, 0x0301, SYN, 3000)},
    {"port": "r2", "note": "SYN-ACK to 198.19.2.1:40001: un-NATed to 198.18.1.3:40000",
     "frame": tcp_out(40001, 0x0b02, "SA", 9000, 3001)},
    {"port": "r1", "note": "ACK from 198.18.1.3, source port rewritten to 40001",
     "frame": tcp_in(H3, IN3, 0x0302, ACK, 3001, 9001)},
    {"port": "r1", "note": "data from 198.18.1.2 (PSH)", "frame": tcp_in(H2, IN2, 0x0203, PA, 1001, 7001, b"GET /a\r\n")},
    {"port": "r1", "note": "data from 198.18.1.3 (PSH)", "frame": tcp_in(H3, IN3, 0x0303, PA, 3001, 9001, b"GET /b\r\n")},
    {"port": "r2", "note": "server data + ACK to 40000 -> 198.18.1.2",
     "frame": tcp_out(40000, 0x0b03, PA, 7001, 1009, b"A-reply\n")},
    {"port": "r2", "note": "server data + ACK to 40001 -> 198.18.1.3",
     "frame": tcp_out(40001, 0x0b04, PA, 9001, 3009, b"B-reply\n")},
    {"port": "r1", "note": "FIN from 198.18.1.2", "frame": tcp_in(H2, IN2, 0x0204, FA, 1009, 7009)},
    {"port": "r2", "note": "server FIN+ACK to 40000", "frame": tcp_out(40000, 0x0b05, FA, 7009, 1010)},
    {"port": "r1", "note": "last ACK from 198.18.1.2 (entry to TIME_WAIT)", "frame": tcp_in(H2, IN2, 0x0205, ACK, 1010, 7010)},
    {"port": "r1", "note": "FIN from 198.18.1.3", "frame": tcp_in(H3, IN3, 0x0304, FA, 3009, 9009)},
    {"port": "r2", "note": "server FIN+ACK to 40001", "frame": tcp_out(40001, 0x0b06, FA, 9009, 3010)},
    {"port": "r1", "note": "last ACK from 198.18.1.3", "frame": tcp_in(H3, IN3, 0x0305, ACK, 3010, 9010)},
    {"port": "r2", "note": "TCP ACK to 198.19.2.1:40005, no entry: not translated, the router answers with a reset",
     "frame": tcp_out(40005, 0x0b07, ACK, 12345, 777)},
    # UDP: the same clash
    {"port": "r1", "note": "UDP 198.18.1.2:40000 -> 198.19.2.2:53: masqueraded to 198.19.2.1:40000",
     "frame": inside(H2, IN2, 0x0206, UDP(sport=40000, dport=53) / Raw(b"query-a"))},
    {"port": "r1", "note": "UDP 198.18.1.3:40000 -> 198.19.2.2:53: clash, masqueraded to 198.19.2.1:40001",
     "frame": inside(H3, IN3, 0x0306, UDP(sport=40000, dport=53) / Raw(b"query-b"))},
    {"port": "r2", "note": "UDP reply to 40000 -> 198.18.1.2:40000",
     "frame": outside(0x0b08, UDP(sport=53, dport=40000) / Raw(b"answer-a"))},
    {"port": "r2", "note": "UDP reply to 40001 -> 198.18.1.3:40000",
     "frame": outside(0x0b09, UDP(sport=53, dport=40001) / Raw(b"answer-b"))},
    {"port": "r2", "note": "UDP to 198.19.2.1:40002, no entry: delivered locally, ICMP port unreachable",
     "frame": outside(0x0b0a, UDP(sport=53, dport=40002) / Raw(b"answer-c"))},
    # ICMP echo: the id is the "port"
    {"port": "r1", "note": "echo request from 198.18.1.2 id 40000: masqueraded, id kept",
     "frame": inside(H2, IN2, 0x0207, ICMP(type=8, id=40000, seq=1) / Raw(b"ping-a" * 4))},
    {"port": "r1", "note": "echo request from 198.18.1.3 id 40000: clash, id rewritten to 40001",
     "frame": inside(H3, IN3, 0x0307, ICMP(type=8, id=40000, seq=1) / Raw(b"ping-b" * 4))},
    {"port": "r2", "note": "echo reply id 40000 -> 198.18.1.2",
     "frame": outside(0x0b0b, ICMP(type=0, id=40000, seq=1) / Raw(b"ping-a" * 4))},
    {"port": "r2", "note": "echo reply id 40001 -> 198.18.1.3 with id 40000",
     "frame": outside(0x0b0c, ICMP(type=0, id=40001, seq=1) / Raw(b"ping-b" * 4))},
    {"port": "r2", "note": "echo reply id 40002, no entry: reaches the router, which sends nothing",
     "frame": outside(0x0b0d, ICMP(type=0, id=40002, seq=1) / Raw(b"ping-c" * 4))},
  ],
  "settle_s": 1.0,
}
