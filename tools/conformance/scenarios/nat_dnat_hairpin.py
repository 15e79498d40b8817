from scapy.all import Ether, IP, TCP, UDP, Raw
# Port forwarding with hairpin NAT, as container hosts set it up: TCP to the router's outside address port
# 8080 is destination-NATed to the inside server 198.18.1.2:80. An outside client's connection is translated
# both ways. An inside host connecting to the same public address and port is DNATed to a server on its own
# link: the packet comes in on r1 and goes out of r1, and the `ct status dnat` masquerade rule gives it the
# router's inside address as source, so the server's replies come back through the router and are
# un-NATed both ways. send_redirects is 1 (the default, stated), and without NAT a packet forwarded out of the
# port it came in on is also answered with an ICMP redirect. With this NAT ruleset loaded Linux 6.18 sent no
# redirect about any hairpin packet, nor about the first packet of a plain (not NATed) flow that turns back
# out of r1, whose conntrack entry is not yet confirmed when the redirect is made; it did send one about that
# flow's second packet. (With only a filter table loaded both packets got their redirect.) Linux rate-limits
# redirects per destination host (each waits twice as long as the one before, from 20 ms), so the steps that
# could draw one are 0.4 s apart.
R1, R2 = "02:00:00:00:27:31", "02:00:00:00:27:32"       # the router: r1 inside, r2 outside
H2, H3 = "02:00:00:00:a1:32", "02:00:00:00:a1:33"       # inside server 198.18.1.2, inside client 198.18.1.3
C = "02:00:00:00:b2:32"                                  # outside client 198.19.2.2
SRV, INCLI, OUTCLI, PUB, GW_IN = "198.18.1.2", "198.18.1.3", "198.19.2.2", "198.19.2.1", "198.18.1.1"

NFT = """table ip nat {
    chain prerouting {
        type nat hook prerouting priority dstnat ; policy accept ;
        ip daddr 198.19.2.1 tcp dport 8080 dnat to 198.18.1.2:80
    }
    chain postrouting {
        type nat hook postrouting priority srcnat ; policy accept ;
        ip saddr 198.18.1.0/24 oifname "r1" ct status dnat masquerade
    }
}
"""


def tcp(mac_src, mac_dst, src, dst, ident, sport, dport, flags, seq, ack=0, data=b"", win=64240):
    t = Ether(src=mac_src, dst=mac_dst) / IP(src=src, dst=dst, id=ident) / TCP(
        sport=sport, dport=dport, flags=flags, seq=seq, ack=ack, window=win)
    return t / Raw(data) if data else t


def direct(ident):
    return Ether(src=H3, dst=R1) / IP(src=INCLI, dst=SRV, id=ident) / UDP(sport=4000, dport=4001) / Raw(b"direct")


HAIRPIN_GAP_S = 0.4

SCENARIO = {
  "name": "nat-dnat-hairpin",
  "device": "router",
  "router": {
    "neighbors": [{"ip": SRV, "mac": H2, "dev": "r1"}, {"ip": INCLI, "mac": H3, "dev": "r1"},
                  {"ip": OUTCLI, "mac": C, "dev": "r2"}],
    "sysctl": {
      "net.ipv4.conf.all.send_redirects": 1,
      "net.ipv4.conf.default.send_redirects": 1,
      "net.netfilter.nf_conntrack_tcp_loose": 1,
      "net.netfilter.nf_conntrack_tcp_timeout_syn_sent": 120,
      "net.netfilter.nf_conntrack_tcp_timeout_syn_recv": 60,
      "net.netfilter.nf_conntrack_tcp_timeout_established": 432000,
    },
    "nftables": NFT,
  },
  "ports": [
    {"name": "r1", "mac": R1, "addresses": ["198.18.1.1/24"]},
    {"name": "r2", "mac": R2, "addresses": ["198.19.2.1/24"]},
  ],
  "steps": [
    {"port": "r2", "note": "SYN 198.19.2.2:50000 -> 198.19.2.1:8080: DNAT to 198.18.1.2:80, forwarded out r1",
     "frame": tcp(C, R2, OUTCLI, PUB, 0x3201, 50000, 8080, "S", 100)},
    {"port": "r1", "note": "SYN-ACK from 198.18.1.2:80: source un-DNATed to 198.19.2.1:8080, out r2",
     "frame": tcp(H2, R1, SRV, OUTCLI, 0x2201, 80, 50000, "SA", 800, 101, win=65160)},
    {"port": "r2", "note": "ACK from the outside client: DNATed, forwarded",
     "frame": tcp(C, R2, OUTCLI, PUB, 0x3202, 50000, 8080, "A", 101, 801)},
    {"port": "r2", "note": "request from the outside client: DNATed, forwarded",
     "frame": tcp(C, R2, OUTCLI, PUB, 0x3203, 50000, 8080, "PA", 101, 801, b"GET / HTTP/1.0\r\n\r\n")},
    {"port": "r1", "note": "hairpin: SYN 198.18.1.3:50001 -> 198.19.2.1:8080 from the inside: DNAT to 198.18.1.2:80, "
                           "out r1 again, masqueraded to 198.18.1.1:50001 (no redirect)",
     "frame": tcp(H3, R1, INCLI, PUB, 0x3301, 50001, 8080, "S", 300), "gap_s": HAIRPIN_GAP_S},
    {"port": "r1", "note": "hairpin SYN-ACK 198.18.1.2:80 -> 198.18.1.1:50001: un-NATed both ways to "
                           "198.19.2.1:8080 -> 198.18.1.3:50001, out r1",
     "frame": tcp(H2, R1, SRV, GW_IN, 0x2202, 80, 50001, "SA", 900, 301, win=65160), "gap_s": HAIRPIN_GAP_S},
    {"port": "r1", "note": "hairpin ACK from 198.18.1.3",
     "frame": tcp(H3, R1, INCLI, PUB, 0x3302, 50001, 8080, "A", 301, 901), "gap_s": HAIRPIN_GAP_S},
    {"port": "r1", "note": "hairpin request from 198.18.1.3",
     "frame": tcp(H3, R1, INCLI, PUB, 0x3303, 50001, 8080, "PA", 301, 901, b"GET /in HTTP/1.0\r\n\r\n"),
     "gap_s": HAIRPIN_GAP_S},
    {"port": "r1", "note": "hairpin response from the server",
     "frame": tcp(H2, R1, SRV, GW_IN, 0x2203, 80, 50001, "PA", 901, 321, b"HTTP/1.0 200 OK\r\n\r\n", win=65160),
     "gap_s": HAIRPIN_GAP_S},
    {"port": "r1", "note": "for contrast, no NAT: UDP 198.18.1.3:4000 -> 198.18.1.2:4001 sent to the router's MAC is "
                           "forwarded out r1; no redirect about this first packet of the flow (its entry is not "
                           "confirmed yet when the redirect would be sent)",
     "frame": direct(0x3304), "gap_s": HAIRPIN_GAP_S},
    {"port": "r1", "note": "the same flow's second packet: forwarded, and now a redirect (host 198.18.1.2, gateway "
                           "198.18.1.2) goes to 198.18.1.3 first",
     "frame": direct(0x3305)},
  ],
  "settle_s": 1.0,
}
