from scapy.all import Ether, ARP
# proxy_arp corners (arp_process / arp_fwd_proxy). proxy_arp=1 on r1 only. Linux delays proxied replies to
# BROADCAST requests by a random 0..proxy_delay (0.8 s), so every step is 1 s after the previous one.
H1, H2, H3 = "02:00:00:00:e1:01", "02:00:00:00:e2:02", "02:00:00:00:e1:03"
R1, R2 = "02:00:00:00:06:01", "02:00:00:00:06:02"
BC = "ff:ff:ff:ff:ff:ff"
def req(pdst, src=H1, psrc="198.18.70.2", dst=BC):
    return Ether(src=src, dst=dst) / ARP(op=1, hwsrc=src, psrc=psrc, pdst=pdst)
def s(port, note, frame):
    return {"port": port, "note": note, "frame": frame, "gap_s": 1.0}
SCENARIO = {
  "name": "router-proxyarp-corners",
  "device": "router",
  "router": {
    "routes": ["198.18.80.0/24 via 198.18.71.2 dev r2", "198.18.70.200/32 dev r2"],
    "neighbors": [{"ip": "198.18.70.2", "mac": H1, "dev": "r1"}, {"ip": "198.18.71.2", "mac": H2, "dev": "r2"}],
  },
  "ports": [
    {"name": "r1", "mac": R1, "addresses": ["198.18.70.1/24"], "sysctl": {"proxy_arp": 1}},
    {"name": "r2", "mac": R2, "addresses": ["198.18.71.1/24"]},
  ],
  "steps": [
    s("r1", "(a) who-has 198.18.80.5 (routed via r2): proxied reply, r1 MAC, after proxy_delay",
      req("198.18.80.5")),
    s("r1", "(a2) who-has 198.18.70.200 (/32 out r2 inside r1's subnet): proxied", req("198.18.70.200")),
    s("r1", "(a3) who-has 198.18.71.9 (r2's connected subnet): proxied", req("198.18.71.9")),
    s("r1", "(b) who-has 198.18.70.9 (r1's own subnet, route dev == in dev): no reply", req("198.18.70.9")),
    s("r1", "(c) who-has 198.18.99.9 (no route at all): no reply", req("198.18.99.9")),
    s("r1", "(c2) who-has 198.18.70.255 (subnet broadcast, RTN_BROADCAST): no reply", req("198.18.70.255")),
    s("r1", "(c3) who-has 224.0.0.5 (multicast target): no reply", req("224.0.0.5")),
    s("r1", "(d) who-has 198.18.71.1 (router's r2 address) asked on r1: local, answered with r1 MAC (arp_ignore=0)",
      req("198.18.71.1")),
    s("r1", "(d2) who-has 198.18.70.1 (r1's own address): answered", req("198.18.70.1")),
    s("r1", "(e) UNICAST who-has 198.18.80.6 to r1's MAC: PACKET_HOST, proxied reply without proxy_delay",
      req("198.18.80.6", dst=R1)),
    s("r1", "(e2) who-has 198.18.80.6 unicast to another MAC: PACKET_OTHERHOST, dropped",
      req("198.18.80.6", dst="02:00:00:00:99:99")),
    s("r1", "(f) gratuitous ARP request (sip == tip == 198.18.70.3, on r1's subnet): no output",
      req("198.18.70.3", src=H3, psrc="198.18.70.3")),
    s("r1", "(f2) broadcast ARP reply not for us (198.18.70.3 -> 198.18.70.4): no output",
      Ether(src=H3, dst=BC) / ARP(op=2, hwsrc=H3, psrc="198.18.70.3", hwdst="00:00:00:00:00:00", pdst="198.18.70.4")),
    s("r1", "(f3) unicast ARP reply to r1 for an address nobody asked (198.18.70.3 is-at H3): no output",
      Ether(src=H3, dst=R1) / ARP(op=2, hwsrc=H3, psrc="198.18.70.3", hwdst=R1, pdst="198.18.70.1")),
    s("r1", "(f4) gratuitous ARP request for a PROXIED address (sip == tip == 198.18.70.200): Linux has no "
            "gratuitous special case (drop_gratuitous_arp=0), so whatever it does is recorded",
      req("198.18.70.200", src=H3, psrc="198.18.70.200")),
    s("r1", "(g) ARP probe (sip 0.0.0.0) for proxied 198.18.80.7: only local targets are answered -> none",
      req("198.18.80.7", src=H3, psrc="0.0.0.0")),
    s("r1", "(g2) ARP probe (sip 0.0.0.0) for 198.18.70.1: answered (DAD conflict), unicast to the prober",
      req("198.18.70.1", src=H3, psrc="0.0.0.0")),
    s("r2", "(h) who-has 198.18.70.9 asked on r2 (proxy_arp off on r2): no reply",
      req("198.18.70.9", src=H2, psrc="198.18.71.2")),
    s("r2", "(h2) who-has 198.18.71.1 on r2: normal reply", req("198.18.71.1", src=H2, psrc="198.18.71.2")),
  ],
  "settle_s": 1.5,
}
