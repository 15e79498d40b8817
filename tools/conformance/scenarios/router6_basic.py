from scapy.all import Ether, IP, IPv6, UDP, ICMPv6EchoRequest, Raw
from scapy.utils6 import in6_mactoifaceid
# IPv6 forwarding and the ICMPv6 the router itself originates, on a dual-stack router (r1 also has IPv4).
# r2 has MTU 1280, the IPv6 minimum. Every next hop and every host the router answers is a static neighbour,
# global and link-local, so no neighbour discovery happens here (router6_ndisc.py is about that).
H1, H2 = "02:00:00:00:71:0a", "02:00:00:00:72:0b"
R1, R2 = "02:00:00:00:70:01", "02:00:00:00:70:02"


def link_local(mac):
    return "fe80::" + in6_mactoifaceid(mac)


H1_LL, R1_LL, R2_LL = link_local(H1), link_local(R1), link_local(R2)


def from_h1(dst="2001:db8:72::2", src="2001:db8:71::2", **kw):
    return Ether(src=H1, dst=R1) / IPv6(src=src, dst=dst, **kw)


SCENARIO = {
  "name": "router6-basic",
  "device": "router",
  "router": {
    "routes": ["2001:db8:73::/64 via 2001:db8:72::2 dev r2",
               "unreachable 2001:db8:79::/64",
               "prohibit 2001:db8:7a::/64",
               "blackhole 2001:db8:7b::/64"],
    "neighbors": [{"ip": "2001:db8:71::2", "mac": H1, "dev": "r1"},
                  {"ip": H1_LL, "mac": H1, "dev": "r1"},
                  # link-local destinations on r1 that are not the router's: Linux sends them back out r1
                  {"ip": R2_LL, "mac": "02:00:00:00:71:0c", "dev": "r1"},
                  {"ip": "fe80::99", "mac": "02:00:00:00:71:0d", "dev": "r1"},
                  {"ip": "2001:db8:72::2", "mac": H2, "dev": "r2"},
                  {"ip": "198.18.71.2", "mac": H1, "dev": "r1"},
                  {"ip": "198.18.72.2", "mac": H2, "dev": "r2"}],
  },
  "ports": [
    {"name": "r1", "mac": R1, "addresses": ["198.18.71.1/24", "2001:db8:71::1/64"]},
    {"name": "r2", "mac": R2, "addresses": ["198.18.72.1/24", "2001:db8:72::1/64"], "mtu": 1280},
  ],
  "steps": [
    {"port": "r1", "note": "UDP to H2: forwarded out r2, hop limit 64 -> 63, MACs R2 -> H2, flow label kept",
     "frame": from_h1(fl=0x12345) / UDP(sport=1000, dport=2000) / Raw(b"f" * 64)},
    {"port": "r1", "note": "to 2001:db8:73::9: forwarded by the route via 2001:db8:72::2 (H2's MAC)",
     "frame": from_h1(dst="2001:db8:73::9", hlim=9) / UDP(sport=1001, dport=2001) / Raw(b"routed")},
    {"port": "r2", "note": "reverse direction: forwarded out r1, hop limit 5 -> 4",
     "frame": Ether(src=H2, dst=R2) / IPv6(src="2001:db8:72::2", dst="2001:db8:71::2", hlim=5) /
              UDP(sport=1002, dport=2002) / Raw(b"r" * 20)},
    {"port": "r1", "note": "hop limit 1: time exceeded (type 3 code 0) from 2001:db8:71::1 to H1, not forwarded",
     "frame": from_h1(hlim=1) / UDP(sport=1003, dport=33434) / Raw(b"t" * 32)},
    {"port": "r1", "note": "hop limit 0: also time exceeded",
     "frame": from_h1(hlim=0) / UDP(sport=1004, dport=33435) / Raw(b"z" * 8)},
    {"port": "r1", "note": "echo request to 2001:db8:71::1 (r1's global address): echo reply, hop limit 64",
     "frame": from_h1(dst="2001:db8:71::1") / ICMPv6EchoRequest(id=7, seq=1, data=b"p" * 56)},
    {"port": "r1", "note": "echo request with flow label 0xabcde: echo reply with flow label 0 (not reflected: "
                           "flowlabel_reflect 0; no auto label: auto_flowlabels 0)",
     "frame": from_h1(dst="2001:db8:71::1", fl=0xabcde) / ICMPv6EchoRequest(id=7, seq=6, data=b"w" * 8)},
    {"port": "r1", "note": "echo request to 2001:db8:72::1 (r2's address, asked on r1): echo reply from it",
     "frame": from_h1(dst="2001:db8:72::1") / ICMPv6EchoRequest(id=7, seq=2, data=b"q" * 56)},
    {"port": "r1", "note": "echo request from H1's link-local to r1's link-local (EUI-64 of R1): echo reply",
     "frame": from_h1(src=H1_LL, dst=R1_LL) / ICMPv6EchoRequest(id=7, seq=3, data=b"l" * 16)},
    {"port": "r1", "note": "echo request to r2's link-local asked on r1: not an address of r1 (link-local is per link), "
                           "so Linux forwards it back out r1 (hop limit 63) and sends H1 a redirect",
     "frame": from_h1(src=H1_LL, dst=R2_LL) / ICMPv6EchoRequest(id=7, seq=4, data=b"m" * 16)},
    {"port": "r1", "note": "echo request to ff02::1 (all nodes): Linux answers multicast echo from r1's link-local",
     "frame": Ether(src=H1, dst="33:33:00:00:00:01") / IPv6(src=H1_LL, dst="ff02::1") /
              ICMPv6EchoRequest(id=7, seq=5, data=b"a" * 8)},
    {"port": "r1", "note": "no route to 2001:db8:77::1: destination unreachable code 0 (no route)",
     "frame": from_h1(dst="2001:db8:77::1") / UDP(sport=1005, dport=2005) / Raw(b"n" * 16)},
    {"port": "r1", "note": "unreachable route 2001:db8:79::/64: destination unreachable code 0",
     "frame": from_h1(dst="2001:db8:79::1") / UDP(sport=1006, dport=2006) / Raw(b"u" * 16)},
    {"port": "r1", "note": "prohibit route 2001:db8:7a::/64: destination unreachable code 1 (admin prohibited)",
     "frame": from_h1(dst="2001:db8:7a::1") / UDP(sport=1007, dport=2007) / Raw(b"x" * 16)},
    {"port": "r1", "note": "blackhole route 2001:db8:7b::/64: dropped silently",
     "frame": from_h1(dst="2001:db8:7b::1") / UDP(sport=1008, dport=2008) / Raw(b"b" * 16)},
    {"port": "r1", "note": "UDP to the router's 2001:db8:71::1 port 9: destination unreachable code 4 (port)",
     "frame": from_h1(dst="2001:db8:71::1") / UDP(sport=1009, dport=9) / Raw(b"d" * 16)},
    {"port": "r1", "note": "1500-byte packet to H2 out r2 (MTU 1280): packet too big, MTU 1280, quoting 1232 bytes",
     "frame": from_h1() / UDP(sport=1010, dport=2010) / Raw(b"g" * (1500 - 48))},
    {"port": "r1", "note": "1280-byte packet to H2: fits r2's MTU, forwarded",
     "frame": from_h1() / UDP(sport=1011, dport=2011) / Raw(b"h" * (1280 - 48))},
    {"port": "r1", "note": "to ff0e::114 (global-scope multicast): not forwarded (no multicast routing)",
     "frame": Ether(src=H1, dst="33:33:00:00:01:14") / IPv6(src="2001:db8:71::2", dst="ff0e::114") /
              UDP(sport=1012, dport=2012) / Raw(b"c" * 8)},
    {"port": "r1", "note": "to ff05::2 (site-local all routers multicast): not forwarded",
     "frame": Ether(src=H1, dst="33:33:00:00:00:02") / IPv6(src="2001:db8:71::2", dst="ff05::2") /
              UDP(sport=1013, dport=2013) / Raw(b"s" * 8)},
    {"port": "r1", "note": "to fe80::99 (link-local, not the router's), sent to R1's MAC: like any on-link destination, "
                           "forwarded back out r1 with a redirect to H1 (fe80::/64 is r1's connected route)",
     "frame": from_h1(src=H1_LL, dst="fe80::99") / UDP(sport=1014, dport=2014) / Raw(b"k" * 8)},
    {"port": "r1", "note": "from H1's link-local to H2's global address: not forwarded beyond the link; "
                           "destination unreachable code 2 (beyond scope of source) to H1's link-local",
     "frame": from_h1(src=H1_LL) / UDP(sport=1015, dport=2015) / Raw(b"e" * 8)},
    {"port": "r1", "note": "frame not addressed to R1's MAC: ignored",
     "frame": Ether(src=H1, dst="02:00:00:00:99:99") / IPv6(src="2001:db8:71::2", dst="2001:db8:72::2") /
              UDP(sport=1016, dport=2016) / Raw(b"o" * 8)},
    {"port": "r1", "note": "IPv4 next to IPv6: UDP to 198.18.72.2 forwarded out r2, TTL 64 -> 63",
     "frame": Ether(src=H1, dst=R1) / IP(src="198.18.71.2", dst="198.18.72.2") / UDP(sport=1017, dport=2017) /
              Raw(b"4" * 16)},
  ],
  "settle_s": 0.5,
}
