from scapy.all import Ether, IP, UDP, ICMP, Raw
# ICMP errors about NATed flows. Two UDP flows: an outside client's to the router's outside address, port
# 5000, destination-NATed to the inside server 198.18.1.2:5001; and an inside host's to an outside server,
# masqueraded (its source port is unique, so masquerade keeps it). An ICMP error about a packet of either flow
# is RELATED to its entry: Linux rewrites the outer header as for a reply and the quoted (embedded) header
# back to what the error's receiver sent, then forwards it. Each error quotes the datagram exactly as its
# sender received it (TTL 63 after the router, translated addresses). Two TTL-1 packets make the router itself
# send time exceeded about a NATed packet: the quote it builds is translated back before it leaves.
R1, R2 = "02:00:00:00:27:21", "02:00:00:00:27:22"       # the router: r1 inside, r2 outside
H2, H3 = "02:00:00:00:a1:22", "02:00:00:00:a1:23"       # inside server 198.18.1.2, inside client 198.18.1.3
C, S = "02:00:00:00:b2:22", "02:00:00:00:b2:23"         # outside client 198.19.2.2, outside server 198.19.2.3
INSRV, INCLI, OUTCLI, OUTSRV, PUB = "198.18.1.2", "198.18.1.3", "198.19.2.2", "198.19.2.3", "198.19.2.1"

NFT = """table ip nat {
    chain prerouting {
        type nat hook prerouting priority dstnat ; policy accept ;
        iifname "r2" ip daddr 198.19.2.1 udp dport 5000 dnat to 198.18.1.2:5001
    }
    chain postrouting {
        type nat hook postrouting priority srcnat ; policy accept ;
        oifname "r2" ip saddr 198.18.1.0/24 masquerade
    }
}
"""


def eth_in(mac):
    return Ether(src=mac, dst=R1)


def eth_out(mac):
    return Ether(src=mac, dst=R2)


# The datagrams as they were on the wire where each error's sender saw them (after the router: TTL 63).
DNAT_REQ_AT_SERVER = IP(src=OUTCLI, dst=INSRV, id=0x2201, ttl=63) / UDP(sport=6000, dport=5001) / Raw(b"hello-dnat")
DNAT_REPLY_AT_CLIENT = IP(src=PUB, dst=OUTCLI, id=0x1201, ttl=63) / UDP(sport=5000, dport=6000) / Raw(b"reply-dnat" * 60)
MASQ_REQ_AT_SERVER = IP(src=PUB, dst=OUTSRV, id=0x1301, ttl=63) / UDP(sport=7000, dport=53) / Raw(b"hello-masq")
MASQ_BIG_AT_SERVER = IP(src=PUB, dst=OUTSRV, id=0x1302, ttl=63, flags="DF") / UDP(sport=7000, dport=53) / Raw(b"M" * 1300)


def quote(pkt):
    """An ICMP error quotes the offending datagram's IP header and 8 bytes of it (as a host would)."""
    raw = bytes(pkt)
    return raw[:(raw[0] & 0xf) * 4 + 8]


SCENARIO = {
  "name": "nat-related-icmp",
  "device": "router",
  "router": {
    "neighbors": [{"ip": INSRV, "mac": H2, "dev": "r1"}, {"ip": INCLI, "mac": H3, "dev": "r1"},
                  {"ip": OUTCLI, "mac": C, "dev": "r2"}, {"ip": OUTSRV, "mac": S, "dev": "r2"}],
    "sysctl": {
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
    {"port": "r2", "note": "UDP 198.19.2.2:6000 -> 198.19.2.1:5000: DNAT to 198.18.1.2:5001, forwarded out r1",
     "frame": eth_out(C) / IP(src=OUTCLI, dst=PUB, id=0x2201) / UDP(sport=6000, dport=5000) / Raw(b"hello-dnat")},
    {"port": "r1", "note": "reply 198.18.1.2:5001 -> 198.19.2.2:6000 (600 bytes): source un-DNATed to 198.19.2.1:5000",
     "frame": eth_in(H2) / IP(src=INSRV, dst=OUTCLI, id=0x1201) / UDP(sport=5001, dport=6000) / Raw(b"reply-dnat" * 60)},
    {"port": "r1", "note": "port unreachable from 198.18.1.2 quoting the DNATed datagram: RELATED; outer source "
                           "becomes 198.19.2.1, the quote's destination 198.19.2.1:5000",
     "frame": eth_in(H2) / IP(src=INSRV, dst=OUTCLI, id=0x1202) / ICMP(type=3, code=3) / quote(DNAT_REQ_AT_SERVER)},
    {"port": "r2", "note": "fragmentation needed (mtu 576) from 198.19.2.2 quoting the reply: RELATED reply; outer "
                           "destination becomes 198.18.1.2, the quote's source 198.18.1.2:5001",
     "frame": eth_out(C) / IP(src=OUTCLI, dst=PUB, id=0x2202) / ICMP(type=3, code=4, nexthopmtu=576) / quote(DNAT_REPLY_AT_CLIENT)},
    {"port": "r1", "note": "UDP 198.18.1.3:7000 -> 198.19.2.3:53: masqueraded to 198.19.2.1:7000",
     "frame": eth_in(H3) / IP(src=INCLI, dst=OUTSRV, id=0x1301) / UDP(sport=7000, dport=53) / Raw(b"hello-masq")},
    {"port": "r2", "note": "port unreachable from 198.19.2.3 quoting the masqueraded datagram: RELATED; outer "
                           "destination becomes 198.18.1.3, the quote's source 198.18.1.3:7000",
     "frame": eth_out(S) / IP(src=OUTSRV, dst=PUB, id=0x2301) / ICMP(type=3, code=3) / quote(MASQ_REQ_AT_SERVER)},
    {"port": "r1", "note": "1328-byte UDP with DF on the masqueraded flow: forwarded (r2 MTU 1500)",
     "frame": eth_in(H3) / IP(src=INCLI, dst=OUTSRV, id=0x1302, flags="DF") / UDP(sport=7000, dport=53) / Raw(b"M" * 1300)},
    {"port": "r2", "note": "fragmentation needed (mtu 1280) from 198.19.2.3 about it: translated like the port unreachable",
     "frame": eth_out(S) / IP(src=OUTSRV, dst=PUB, id=0x2302) / ICMP(type=3, code=4, nexthopmtu=1280) / quote(MASQ_BIG_AT_SERVER)},
    {"port": "r1", "note": "TTL 1 on the masqueraded flow: the router sends time exceeded to 198.18.1.3 quoting the "
                           "datagram as received (masquerade happens later, at postrouting)",
     "frame": eth_in(H3) / IP(src=INCLI, dst=OUTSRV, id=0x1303, ttl=1) / UDP(sport=7000, dport=53) / Raw(b"ttl-one-masq")},
    {"port": "r2", "note": "TTL 1 on the DNATed flow: DNAT happened at prerouting, so the quote the router builds names "
                           "198.18.1.2:5001; Linux translates it back to 198.19.2.1:5000 before it leaves",
     "frame": eth_out(C) / IP(src=OUTCLI, dst=PUB, id=0x2203, ttl=1) / UDP(sport=6000, dport=5000) / Raw(b"ttl-one-dnat")},
  ],
  "settle_s": 1.0,
}
