#!/usr/bin/python3
"""Writes the pcaps of examples/router-pcap-test.yaml: hostile traffic into a router, and what Linux sends out.

    /usr/bin/python3 examples/router-pcap-test.py [OUTDIR]     # default: the directory of this script

Needs scapy (Debian/Ubuntu: apt-get install python3-scapy; it lives in /usr/bin/python3's packages). Writes

    router-pcap-test-in.pcap     what arrives on the router's wan0 from the internet (the replay device's file)
    router-pcap-test-lan0.pcap   what a Linux router forwards out of lan0 to the server
    router-pcap-test-wan0.pcap   what leaves wan0: the router's ICMP errors and ARP reply, the server's answers

The expected files are written from the rules a Linux router and host follow, not recorded from a run, so a
run that matches them agrees with those rules: forwarding decrements the TTL and rewrites the MACs, a TTL of 1
gets an ICMP time exceeded quoting the packet as it arrived, a UDP port nobody listens on gets a port
unreachable, rp_filter drops sources that route out of another device, a blackhole route drops silently, a
bad header checksum is dropped, a permanent neighbour entry ignores ARP claims, a closed TCP port answers with
RST. Every frame is deterministic (no random draws), so running this again gives the same bytes.
"""
import os
import sys

from scapy.all import ARP, ICMP, IP, TCP, UDP, Ether, Raw, wrpcap

# Addresses of examples/router-pcap-test.yaml.
GW_MAC, WAN_MAC = "02:00:00:00:1a:02", "02:00:00:00:1a:01"   # the upstream gateway (the replay end), router wan0
LAN_MAC, SRV_MAC = "02:00:00:00:1b:01", "02:00:00:00:1b:0a"  # router lan0, the server's eth0
WAN_IP, GW_IP = "198.18.26.1", "198.18.26.2"
SERVER = "198.18.27.10"
EPOCH = 1700000000.0

inputs, lan, wan = [], [], []


def at(frame, t_ms):
    frame.time = EPOCH + t_ms / 1000.0
    return frame


def from_internet(t_ms, ip_layer):
    """A frame the gateway hands to the router's wan0."""
    f = at(Ether(src=GW_MAC, dst=WAN_MAC) / ip_layer, t_ms)
    inputs.append(f)
    return f


def forwarded(f, t_ms):
    """What the router sends to the server for input frame f: TTL - 1, checksum recomputed, new MACs."""
    ip = f[IP].copy()
    ip.ttl -= 1
    del ip.chksum
    lan.append(at(Ether(src=LAN_MAC, dst=SRV_MAC) / ip, t_ms))


def out_wan(ip_layer, t_ms):
    """A packet the router sends towards the internet (via the gateway)."""
    wan.append(at(Ether(src=WAN_MAC, dst=GW_MAC) / ip_layer, t_ms))


def rst_from_server(f, t_ms):
    """The server's reset for a segment to a closed port (RFC 793; Linux tcp_v4_send_reset), forwarded: TTL 63."""
    ip, tcp = f[IP], f[TCP]
    payload = len(tcp.payload)
    if tcp.flags.A:
        seq, ack, flags = tcp.ack, 0, "R"
    else:
        seq = 0
        ack = (tcp.seq + payload + (1 if tcp.flags.S else 0) + (1 if tcp.flags.F else 0)) & 0xffffffff
        flags = "RA"
    # ID 0 and DF: Linux's reply socket sets DF, and a DF packet of no connection gets ID 0 (masked anyway: the
    # source is an address of the topology).
    out_wan(IP(src=ip.dst, dst=ip.src, ttl=63, flags="DF", id=0)
            / TCP(sport=tcp.dport, dport=tcp.sport, seq=seq, ack=ack, flags=flags, window=0), t_ms)


def icmp_error(f, t_ms, type_, code):
    """An ICMP error from the router quoting the packet as it arrived (Linux icmp_send: TOS 0xc0, TTL 64, no DF)."""
    quoted = bytes(f[IP])[:548]
    out_wan(IP(src=WAN_IP, dst=f[IP].src, tos=0xc0, ttl=64, id=0) / ICMP(type=type_, code=code) / Raw(quoted), t_ms)


t = 0.0
# 1. A SYN flood on the server's port 80 from spoofed sources, 0.1 ms apart. Each is forwarded; the server has
#    no listener, so each gets a RST back through the router.
for i in range(16):
    f = from_internet(t, IP(src="198.19.%d.%d" % (i + 1, (i * 37) % 250 + 1), dst=SERVER, ttl=40 + i, id=1000 + i)
                      / TCP(sport=1024 + i * 97, dport=80, seq=(i * 1000003) & 0xffffffff, flags="S", window=1024))
    forwarded(f, t)
    rst_from_server(f, t)
    t += 0.1
t = 5.0
# 2. A port scan: SYNs to the usual ports, 1 ms apart.
for k, port in enumerate([21, 22, 23, 25, 443, 8080]):
    f = from_internet(t, IP(src="198.19.200.5", dst=SERVER, ttl=52, id=2000 + k)
                      / TCP(sport=40000 + k, dport=port, seq=777000 + k, flags="S", window=1024))
    forwarded(f, t)
    rst_from_server(f, t)
    t += 1.0
# 3. Xmas (FIN, PSH, URG) and ACK scans: forwarded, and reset by the server.
f = from_internet(t, IP(src="198.19.200.5", dst=SERVER, ttl=52, id=2100)
                  / TCP(sport=40100, dport=80, seq=5555, flags="FPU", urgptr=0, window=1024))
forwarded(f, t)
rst_from_server(f, t)
t += 1.0
f = from_internet(t, IP(src="198.19.200.5", dst=SERVER, ttl=52, id=2101)
                  / TCP(sport=40101, dport=80, seq=5556, ack=99999, flags="A", window=1024))
forwarded(f, t)
rst_from_server(f, t)
t += 1.0
# 4. Traceroute-style probes with TTL 1: the router answers with an ICMP time exceeded, forwards nothing.
for k in range(2):
    f = from_internet(t, IP(src="198.19.200.7", dst=SERVER, ttl=1, id=3000 + k)
                      / UDP(sport=50000 + k, dport=33434 + k) / Raw(b"probe-%d" % k))
    icmp_error(f, t, 11, 0)
    t += 1.0
# 5. A probe of the router itself on a UDP port nobody listens on: port unreachable.
f = from_internet(t, IP(src="198.19.200.7", dst=WAN_IP, ttl=60, id=3100) / UDP(sport=50100, dport=33500) / Raw(b"knock"))
icmp_error(f, t, 3, 3)
t += 1.0
# 6. Traffic to a blackholed network: dropped without an answer.
for k in range(3):
    from_internet(t, IP(src="198.19.200.8", dst="198.18.28.%d" % (k + 5), ttl=50, id=3200 + k)
                  / UDP(sport=50200, dport=53) / Raw(b"x" * 20))
    t += 1.0
# 7. Spoofed sources: the server's own network, and a land attack (source = destination). rp_filter drops both:
#    their sources route out of lan0, not wan0.
from_internet(t, IP(src="198.18.27.99", dst=SERVER, ttl=50, id=3300) / TCP(sport=1234, dport=80, seq=1, flags="S"))
t += 1.0
from_internet(t, IP(src=SERVER, dst=SERVER, ttl=50, id=3301) / TCP(sport=80, dport=80, seq=1, flags="S"))
t += 1.0
# 8. A packet with a broken IP header checksum: dropped.
bad = IP(src="198.19.200.9", dst=SERVER, ttl=50, id=3400) / UDP(sport=1, dport=9) / Raw(b"bad")
bad = IP(bytes(bad))
bad.chksum = (bad.chksum + 1) & 0xffff
from_internet(t, bad)
t += 1.0
# 9. ARP: a gratuitous ARP claiming the gateway's address for another MAC (the router's permanent entry ignores
#    it), then an ARP request for the router's address (answered).
from_internet(t, ARP(op=2, hwsrc="02:66:66:66:66:66", psrc=GW_IP, hwdst="ff:ff:ff:ff:ff:ff", pdst=GW_IP))
inputs[-1][Ether].dst = "ff:ff:ff:ff:ff:ff"
inputs[-1][Ether].src = "02:66:66:66:66:66"
t += 1.0
from_internet(t, ARP(op=1, hwsrc=GW_MAC, psrc=GW_IP, hwdst="00:00:00:00:00:00", pdst=WAN_IP))
inputs[-1][Ether].dst = "ff:ff:ff:ff:ff:ff"
wan.append(at(Ether(src=WAN_MAC, dst=GW_MAC) / ARP(op=2, hwsrc=WAN_MAC, psrc=WAN_IP, hwdst=GW_MAC, pdst=GW_IP), t))
t += 1.0
# 10. After the spoofed ARP, a ping of the server: forwarded, and the reply still goes to the real gateway's MAC.
f = from_internet(t, IP(src="198.19.200.10", dst=SERVER, ttl=57, id=3500) / ICMP(type=8, id=0x4242, seq=1)
                  / Raw(b"are you there?"))
forwarded(f, t)
out_wan(IP(src=SERVER, dst="198.19.200.10", ttl=63, id=0) / ICMP(type=0, id=0x4242, seq=1) / Raw(b"are you there?"), t)
t += 1.0

out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
wrpcap(os.path.join(out, "router-pcap-test-in.pcap"), inputs)
wrpcap(os.path.join(out, "router-pcap-test-lan0.pcap"), lan)
wrpcap(os.path.join(out, "router-pcap-test-wan0.pcap"), wan)
print("wrote %d frames in, %d expected out of lan0, %d out of wan0 to %s" % (len(inputs), len(lan), len(wan), out))
