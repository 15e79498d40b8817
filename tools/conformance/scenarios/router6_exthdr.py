from scapy.all import (Ether, IPv6, UDP, Raw, ICMPv6EchoRequest, IPv6ExtHdrHopByHop, IPv6ExtHdrDestOpt,
                       IPv6ExtHdrRouting, IPv6ExtHdrFragment, RouterAlert, HBHOptUnknown, PadN)
# IPv6 extension headers and fragments, at a router (r1 2001:db8:91::1, r2 2001:db8:92::1). H1 and H2 are
# static neighbours. Fragment reassembly gives up after ip6frag_time = 2 s here (default 60 s), so a datagram
# that never completes is answered by "fragment reassembly time exceeded" within the recording.
H1, H2 = "02:00:00:00:91:0a", "02:00:00:00:92:0b"
R1, R2 = "02:00:00:00:90:01", "02:00:00:00:90:02"
H1_IP, H2_IP, R1_IP = "2001:db8:91::2", "2001:db8:92::2", "2001:db8:91::1"
ECHO, UDP_NH, FRAG_NH = 58, 17, 44


def from_h1(dst=H2_IP, **kw):
    return Ether(src=H1, dst=R1) / IPv6(src=H1_IP, dst=dst, **kw)


def fragments(upper, dst, ident, pieces, nh=ECHO, last_more=0):
    """Splits the upper-layer bytes of `upper` (checksummed as one datagram H1 -> dst) at the byte offsets in
    `pieces` [(start, end)], each piece one fragment with the same identification; M=1 on all but the one
    that ends the datagram (unless `last_more`)."""
    whole = bytes(IPv6(src=H1_IP, dst=dst, nh=nh) / upper)[40:]
    out = []
    for start, end in pieces:
        more = 1 if end < len(whole) or last_more else 0
        out.append(from_h1(dst=dst) / IPv6ExtHdrFragment(nh=nh, offset=start // 8, m=more, id=ident) /
                   Raw(whole[start:end]))
    return out


echo_frag = fragments(ICMPv6EchoRequest(id=9, seq=1, data=b"F" * 192), R1_IP, 0x1001, [(0, 104), (104, 200)])
echo_ooo = fragments(ICMPv6EchoRequest(id=9, seq=2, data=b"O" * 192), R1_IP, 0x1002, [(104, 200), (0, 104)])
fwd_frag = fragments(UDP(sport=3000, dport=3001) / Raw(b"W" * 120), H2_IP, 0x1003, [(0, 64), (64, 128)],
                     nh=UDP_NH)
overlap = fragments(ICMPv6EchoRequest(id=9, seq=3, data=b"V" * 192), R1_IP, 0x1004,
                    [(0, 104), (96, 200)])
many = fragments(ICMPv6EchoRequest(id=9, seq=4, data=b"M" * 504), R1_IP, 0x1005,
                 [(o, o + 8) for o in range(0, 512, 8)])
lost = fragments(ICMPv6EchoRequest(id=9, seq=5, data=b"L" * 192), R1_IP, 0x1006, [(0, 104)])
# The first fragment ends inside the header chain: a destination options header (16 bytes) is cut after 8.
chain_bytes = bytes(IPv6(src=H1_IP, dst=R1_IP, nh=60) / IPv6ExtHdrDestOpt(nh=ECHO, options=[PadN(optdata=b"\0" * 10)]) /
                    ICMPv6EchoRequest(id=9, seq=6, data=b"C" * 16))[40:]
tiny_first = from_h1(dst=R1_IP) / IPv6ExtHdrFragment(nh=60, offset=0, m=1, id=0x1007) / Raw(chain_bytes[:8])

SCENARIO = {
  "name": "router6-exthdr",
  "device": "router",
  "router": {
    "neighbors": [{"ip": H1_IP, "mac": H1, "dev": "r1"}, {"ip": H2_IP, "mac": H2, "dev": "r2"}],
    "sysctl": {"net.ipv6.ip6frag_time": 2},
  },
  "ports": [
    {"name": "r1", "mac": R1, "addresses": [R1_IP + "/64"]},
    {"name": "r2", "mac": R2, "addresses": ["2001:db8:92::1/64"]},
  ],
  "steps": [
    {"port": "r1", "note": "hop-by-hop with router alert (MLD, value 0) to H2: no router-alert socket, forwarded "
                           "with the header untouched, hop limit 63",
     "frame": from_h1() / IPv6ExtHdrHopByHop(options=[RouterAlert(value=0)]) / UDP(sport=1, dport=2) / Raw(b"a" * 8)},
    {"port": "r1", "note": "hop-by-hop with an unknown option of action 00 (skip, type 0x1e): forwarded",
     "frame": from_h1() / IPv6ExtHdrHopByHop(options=[HBHOptUnknown(otype=0x1e, optdata=b"\0\0\0\0")]) /
              UDP(sport=3, dport=4) / Raw(b"b" * 8)},
    {"port": "r1", "note": "hop-by-hop with an unknown option of action 10 (type 0x9e): dropped, parameter problem "
                           "code 2 (unrecognized option), pointer 42 (the option's type byte)",
     "frame": from_h1() / IPv6ExtHdrHopByHop(options=[HBHOptUnknown(otype=0x9e, optdata=b"\0\0\0\0")]) /
              UDP(sport=5, dport=6) / Raw(b"c" * 8)},
    {"port": "r1", "note": "hop-by-hop after a destination options header (not first): parameter problem code 1 "
                           "(unrecognized next header), pointer 40 (the destination options' next header)",
     "frame": from_h1(dst=R1_IP) / IPv6ExtHdrDestOpt(nh=0, options=[PadN(optdata=b"\0\0\0\0")]) /
              IPv6ExtHdrHopByHop(nh=ECHO, options=[PadN(optdata=b"\0\0\0\0")]) /
              ICMPv6EchoRequest(id=9, seq=20)},
    {"port": "r1", "note": "destination options with an unknown action-11 option (0xde), in transit to H2: not "
                           "examined by a router, forwarded",
     "frame": from_h1() / IPv6ExtHdrDestOpt(options=[HBHOptUnknown(otype=0xde, optdata=b"\0\0\0\0")]) /
              UDP(sport=7, dport=8) / Raw(b"d" * 8)},
    {"port": "r1", "note": "the same option in an echo request to the router: parameter problem code 2, pointer 42",
     "frame": from_h1(dst=R1_IP) / IPv6ExtHdrDestOpt(options=[HBHOptUnknown(otype=0xde, optdata=b"\0\0\0\0")]) /
              ICMPv6EchoRequest(id=9, seq=21)},
    {"port": "r1", "note": "destination options with only padding, echo request to the router: echo reply",
     "frame": from_h1(dst=R1_IP) / IPv6ExtHdrDestOpt(options=[PadN(optdata=b"\0\0\0\0")]) /
              ICMPv6EchoRequest(id=9, seq=22)},
    {"port": "r1", "note": "routing header type 0, segments left 1, to the router: RH0 is not processed; "
                           "parameter problem code 0, pointer 42 (the routing type)",
     "frame": from_h1(dst=R1_IP) / IPv6ExtHdrRouting(type=0, segleft=1, addresses=[H2_IP]) /
              UDP(sport=9, dport=10) / Raw(b"e" * 8)},
    {"port": "r1", "note": "routing header type 0, segments left 0, echo request to the router: the header is "
                           "skipped, echo reply",
     "frame": from_h1(dst=R1_IP) / IPv6ExtHdrRouting(type=0, segleft=0, addresses=[H2_IP]) /
              ICMPv6EchoRequest(id=9, seq=23)},
    {"port": "r1", "note": "routing header type 0 in transit (destination H2): forwarded untouched",
     "frame": from_h1() / IPv6ExtHdrRouting(type=0, segleft=1, addresses=["2001:db8:92::3"]) /
              UDP(sport=11, dport=12) / Raw(b"f" * 8)},
    {"port": "r1", "note": "routing header of unknown type 253, segments left 1, to the router: parameter problem "
                           "code 0, pointer 42",
     "frame": from_h1(dst=R1_IP) / IPv6ExtHdrRouting(type=253, segleft=1, addresses=[H2_IP]) /
              UDP(sport=13, dport=14) / Raw(b"g" * 8)},
    {"port": "r1", "note": "echo request to the router in 2 fragments: reassembled, one echo reply (unfragmented)",
     "frame": echo_frag[0], "gap_s": 0.01},
    {"port": "r1", "note": "(its second fragment)", "frame": echo_frag[1]},
    {"port": "r1", "note": "echo request in 2 fragments, last one first: reassembled, echo reply",
     "frame": echo_ooo[0], "gap_s": 0.01},
    {"port": "r1", "note": "(its first fragment)", "frame": echo_ooo[1]},
    {"port": "r1", "note": "fragmented UDP to H2: each fragment forwarded as it is (routers do not reassemble)",
     "frame": fwd_frag[0], "gap_s": 0.01},
    {"port": "r1", "note": "(its second fragment)", "frame": fwd_frag[1]},
    {"port": "r1", "note": "overlapping fragments (second starts at 96, first ends at 104): the whole datagram is "
                           "dropped silently (RFC 5722)",
     "frame": overlap[0], "gap_s": 0.01},
    {"port": "r1", "note": "(the overlapping fragment)", "frame": overlap[1]},
    {"port": "r1", "note": "first fragment whose 8 bytes end inside the header chain: parameter problem code 3 "
                           "(incomplete header chain, RFC 7112), pointer 0",
     "frame": tiny_first},
    {"port": "r1", "note": "a non-last fragment whose length is not a multiple of 8: parameter problem code 0, "
                           "pointer 4 (payload length)",
     "frame": from_h1(dst=R1_IP) / IPv6ExtHdrFragment(nh=ECHO, offset=0, m=1, id=0x1008) / Raw(b"\x80\0" + b"x" * 11)},
    {"port": "r1", "note": "a fragment that would end beyond 65535 bytes: parameter problem code 0, pointer 42 "
                           "(the fragment offset)",
     "frame": from_h1(dst=R1_IP) / IPv6ExtHdrFragment(nh=ECHO, offset=8189, m=0, id=0x1009) / Raw(b"y" * 64)},
    {"port": "r1", "note": "atomic fragment (offset 0, M=0) echo request to the router: taken as unfragmented "
                           "(RFC 6946), echo reply",
     "frame": from_h1(dst=R1_IP) / IPv6ExtHdrFragment(nh=ECHO, offset=0, m=0, id=0x100a) /
              ICMPv6EchoRequest(id=9, seq=24, data=b"A" * 8)},
    {"port": "r1", "note": "atomic fragment in transit to H2: forwarded with its fragment header",
     "frame": from_h1() / IPv6ExtHdrFragment(nh=UDP_NH, offset=0, m=0, id=0x100b) / UDP(sport=15, dport=16) /
              Raw(b"h" * 8)},
  ] + [
    {"port": "r1", "note": f"echo request to the router in 64 fragments of 8 bytes: fragment {i + 1}"
                           + (": all reassembled, one echo reply" if i == 63 else ""),
     "frame": f, "gap_s": 0.002}
    for i, f in enumerate(many)
  ] + [
    {"port": "r1", "note": "first fragment of an echo request whose second never comes: after ip6frag_time (2 s) "
                           "time exceeded code 1 (reassembly) to H1, quoting the first fragment",
     "frame": lost[0]},
    {"advance_s": 3.0},
  ],
  "settle_s": 0.5,
}
