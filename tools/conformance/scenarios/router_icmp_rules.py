from scapy.all import Ether, IP, UDP, ICMP, Raw, IPOption_RR
# When Linux does and does not send ICMP errors (icmp_send / __icmp_send, ip_forward, ip_error, udp, raw).
# icmp_ratelimit=0 (set by the oracle). Cases usnet is least likely to get right come last on r1, so that an
# early difference does not hide the rest.
H1, H2 = "02:00:00:00:c1:01", "02:00:00:00:c2:02"
R1, R2 = "02:00:00:00:08:01", "02:00:00:00:08:02"
BC = "ff:ff:ff:ff:ff:ff"
def ip1(dst="198.19.31.2", src="198.19.30.2", mac=R1, **kw):
    return Ether(src=H1, dst=mac) / IP(src=src, dst=dst, **kw)
def quoted():
    # what an ICMP error from a downstream router would quote
    return bytes(IP(src="198.19.31.2", dst="198.19.29.9", id=0x4444, ttl=3) / UDP(sport=53, dport=5353))[:28]
def s(note, frame):
    return {"port": "r1", "note": note, "frame": frame}
SCENARIO = {
  "name": "router-icmp-rules",
  "device": "router",
  "router": {
    "routes": [],
    "neighbors": [{"ip": "198.19.30.2", "mac": H1, "dev": "r1"}, {"ip": "198.19.30.5", "mac": H1, "dev": "r1"},
                  {"ip": "198.19.31.2", "mac": H2, "dev": "r2"}],
  },
  "ports": [
    {"name": "r1", "mac": R1, "addresses": ["198.19.30.1/24"]},
    {"name": "r2", "mac": R2, "addresses": ["198.19.31.1/24"]},
  ],
  "steps": [
    # --- no error ---
    s("TTL 1 ICMP dest-unreachable (an error): no time exceeded",
      ip1(ttl=1, id=0x0301) / ICMP(type=3, code=1) / Raw(quoted())),
    s("TTL 1 ICMP time-exceeded (an error): none", ip1(ttl=1, id=0x0302) / ICMP(type=11, code=0) / Raw(quoted())),
    s("TTL 1 ICMP type 40 (> NR_ICMP_TYPES, assumed an error): none", ip1(ttl=1, id=0x0303) / ICMP(type=40, code=0) / Raw(b"u" * 20)),
    s("TTL 1 non-first fragment (offset 8, MF): none",
      ip1(ttl=1, id=0x0304, proto=17, flags="MF", frag=1) / Raw(b"n" * 64)),
    s("TTL 1 to broadcast MAC (PACKET_BROADCAST, dropped before the TTL check): none",
      ip1(mac=BC, ttl=1, id=0x0305) / UDP(sport=1, dport=33434) / Raw(b"B" * 20)),
    s("TTL 64 to broadcast MAC, unicast IP: not forwarded at all",
      ip1(mac=BC, ttl=64, id=0x0306) / UDP(sport=1, dport=33435) / Raw(b"C" * 20)),
    s("TTL 1 to a multicast MAC, unicast IP: none",
      ip1(mac="01:00:5e:01:02:03", ttl=1, id=0x0307) / UDP(sport=1, dport=33436) / Raw(b"D" * 20)),
    s("UDP to subnet broadcast 198.19.30.255 (broadcast MAC), closed port: no port unreachable",
      ip1(dst="198.19.30.255", mac=BC, id=0x0308) / UDP(sport=2, dport=9) / Raw(b"E" * 20)),
    s("UDP to 198.19.30.255 with r1's unicast MAC, closed port: none (RTCF_BROADCAST)",
      ip1(dst="198.19.30.255", id=0x0309) / UDP(sport=2, dport=9) / Raw(b"F" * 20)),
    s("UDP to 255.255.255.255, closed port: none",
      ip1(dst="255.255.255.255", mac=BC, id=0x030a) / UDP(sport=2, dport=9) / Raw(b"G" * 20)),
    s("protocol 253 to subnet broadcast: no protocol unreachable",
      ip1(dst="198.19.30.255", mac=BC, id=0x030b, proto=253) / Raw(b"H" * 20)),
    s("UDP to multicast 239.1.2.3 TTL 1: none (no mc forwarding, no socket)",
      ip1(dst="239.1.2.3", mac="01:00:5e:01:02:03", ttl=1, id=0x030c) / UDP(sport=2, dport=9) / Raw(b"I" * 20)),
    s("martian source 0.0.0.0, TTL 1: dropped", ip1(src="0.0.0.0", ttl=1, id=0x030d) / UDP(sport=3, dport=9) / Raw(b"J" * 20)),
    s("martian source = router's own 198.19.31.1 (accept_local=0), TTL 1: dropped",
      ip1(src="198.19.31.1", ttl=1, id=0x030e) / UDP(sport=3, dport=9) / Raw(b"K" * 20)),
    # --- errors ---
    s("TTL 1 echo request: time exceeded", ip1(ttl=1, id=0x0310) / ICMP(type=8, id=1, seq=1) / Raw(b"e" * 24)),
    s("TTL 1 echo reply: time exceeded (not an error type)", ip1(ttl=1, id=0x0311) / ICMP(type=0, id=1, seq=2) / Raw(b"r" * 24)),
    s("TTL 1 ICMP type 18 (address mask reply, informational): time exceeded",
      ip1(ttl=1, id=0x0312) / ICMP(type=18) / Raw(b"m" * 4)),
    s("TTL 1 first fragment (offset 0, MF): time exceeded quoting the fragment",
      ip1(ttl=1, id=0x0313, flags="MF") / UDP(sport=4, dport=33437, len=200, chksum=0) / Raw(b"f" * 64)),
    s("TTL 1 TOS 0x10: error TOS 0xc0|(0x10&0x1e)", ip1(ttl=1, tos=0x10, id=0x0314) / UDP(sport=5, dport=33438) / Raw(b"t" * 20)),
    s("TTL 1 TOS 0xb8 (EF): error TOS 0xd8", ip1(ttl=1, tos=0xb8, id=0x0315) / UDP(sport=5, dport=33439) / Raw(b"T" * 20)),
    s("TTL 1 TOS 0x03 (ECN CE): error TOS 0xc0|(0x03&0x1e) = 0xc2", ip1(ttl=1, tos=0x03, id=0x0316) / UDP(sport=5, dport=33440) / Raw(b"w" * 20)),
    s("TTL 0: time exceeded too", ip1(ttl=0, id=0x0317) / UDP(sport=5, dport=33441) / Raw(b"z" * 20)),
    s("TTL 1, 1400 bytes: quote cut so the error is 576 bytes",
      ip1(ttl=1, id=0x0318) / UDP(sport=6, dport=33442) / Raw(b"Q" * 1372)),
    s("UDP to 198.19.30.1, closed port: port unreachable", ip1(dst="198.19.30.1", id=0x0319) / UDP(sport=7, dport=9) / Raw(b"p" * 20)),
    s("UDP to 198.19.31.1 (r2's address) from r1, closed port: port unreachable from 198.19.31.1",
      ip1(dst="198.19.31.1", id=0x031a) / UDP(sport=7, dport=10) / Raw(b"q" * 20)),
    s("UDP to own address, TOS 0xff, closed port: error TOS 0xde",
      ip1(dst="198.19.30.1", id=0x031b, tos=0xff) / UDP(sport=7, dport=11) / Raw(b"s" * 20)),
    s("protocol 253 to 198.19.30.1: protocol unreachable", ip1(dst="198.19.30.1", id=0x031c, proto=253) / Raw(b"P" * 20)),
    s("echo request TTL 1 TOS 0x28 to the router's own address: echo reply (no TTL check for local delivery; reply keeps TOS)",
      ip1(dst="198.19.30.1", ttl=1, tos=0x28, id=0x031d) / ICMP(type=8, id=2, seq=3) / Raw(b"o" * 24)),
    {"port": "r1", "note": "no route to 198.18.200.1 from 198.19.30.2: NO net unreachable. ip_error's per-source bucket "
                           "(ip_rt_error_cost 1 s) is inet_peer.rate_tokens, which icmpv4_xrlim_allow (icmp_ratelimit=0) "
                           "reset to 0 when it sent the protocol unreachable to 198.19.30.2 0.1 s ago",
     "frame": ip1(dst="198.18.200.1", id=0x031e) / UDP(sport=8, dport=9) / Raw(b"N" * 20), "gap_s": 1.5},
    s("no route again 1.5 s later: bucket refilled past 1 s, net unreachable",
      ip1(dst="198.18.200.2", id=0x031f) / UDP(sport=8, dport=9) / Raw(b"M" * 20)),
    {"port": "r2", "note": "reverse: TTL 1 from r2 to r1's host: time exceeded out r2 from 198.19.31.1",
     "frame": Ether(src=H2, dst=R2) / IP(src="198.19.31.2", dst="198.19.30.2", ttl=1, id=0x0320) / UDP(sport=9, dport=33443) / Raw(b"v" * 20)},
    # --- ip_error's own per-source token bucket (ip_rt_error_cost 1 s, burst 5 s), independent of icmp_ratelimit ---
    *[s(f"no route #{i} from 198.19.30.5 (fresh peer: bucket full, 5 s burst) at 50 ms spacing: #0-#4 answered, #5, #6 not",
        ip1(src="198.19.30.5", dst="198.18.201.1", id=0x0330 + i) / UDP(sport=10, dport=9) / Raw(b"R" * (20 + i)))
      for i in range(7)],
    s("source = subnet broadcast 198.19.30.255, TTL 1: NOT martian for Linux with rp_filter=0 (fib_validate_source only "
      "rejects local addresses); time exceeded goes to 198.19.30.255 / ff:ff:ff:ff:ff:ff",
      ip1(src="198.19.30.255", ttl=1, id=0x030f) / UDP(sport=3, dport=9) / Raw(b"L" * 20)),
    # --- options in the offending packet ---
    {"port": "r1", "note": "TTL 1 with record-route: time exceeded; Linux echoes options in the error (__ip_options_echo)",
     "frame": ip1(ttl=1, id=0x0340, options=[IPOption_RR(pointer=4, routers=["0.0.0.0"] * 3)]) / UDP(sport=11, dport=33444) / Raw(b"O" * 20),
     "gap_s": 1.0},
    s("record-route to the router's own address, closed port: port unreachable with echoed options",
      ip1(dst="198.19.30.1", id=0x0341, options=[IPOption_RR(pointer=4, routers=["0.0.0.0"] * 3)]) / UDP(sport=12, dport=9) / Raw(b"X" * 20)),
  ],
}
