from scapy.all import Ether, IPv6, Raw, ICMPv6EchoRequest
# A Linux host taking a router advertisement that usnet's RouterAdvertiser made: the frame below is the first
# advertisement of a usnet namespace whose eth0 (MAC 02:00:00:00:96:fe, address 2001:db8:96::1/64, forwarding on)
# has usnet.ipv6.ra.eth0.send 1, mtu 1400, router_lifetime 600 and the other usnet.ipv6.ra knobs at their defaults
# (cur hop limit 64, prefix 2001:db8:96::/64 on-link and autonomous, valid 30 days, preferred 7 days), as
# RouterAdvertiserTest makes it (and checks that usnet still sends exactly these bytes). The kernel checks its
# checksum, lengths and options, so it taking the advertisement is evidence that usnet's are well formed.
# The host is set up as in host6_ra.py: not forwarding, accept_ra 1, accept_dad 1, router_solicitation_delay 0,
# enhanced_dad 0 (on h1 and all), its router entry kept in DELAY (delay_first_probe_time 60).
H1, RT = "02:00:00:00:96:01", "02:00:00:00:96:fe"
USNET_RA = bytes.fromhex("3333000000010200000096fe86dd6000000000403afffe80000000000000000000fffe0096feff0200000000000000000000000000018600c56c40000258000000000000000001010200000096fe0501000000000578030440c000278d0000093a800000000020010db8009600000000000000000000")
SLAAC = "2001:db8:96::ff:fe00:9601"


def echo(seq):
    return (Ether(src=RT, dst=H1) / IPv6(src="2001:db8:99::5", dst=SLAAC, hlim=60) /
            ICMPv6EchoRequest(id=0x4444, seq=seq) / Raw(b"usnet-ra-%02d" % seq))


SCENARIO = {
  "name": "host6-ra-usnet",
  "device": "router",
  "router": {
    "sysctl": {"net.ipv6.conf.all.forwarding": 0, "net.ipv6.conf.default.forwarding": 0,
               "net.ipv6.conf.all.enhanced_dad": 0},
  },
  "ports": [
    {"name": "h1", "mac": H1, "addresses": ["fd00:96::1/64"],
     "sysctl": {"ipv6.forwarding": 0, "ipv6.accept_ra": 1, "ipv6.accept_dad": 1, "ipv6.enhanced_dad": 0,
                "ipv6.router_solicitations": -1, "ipv6.router_solicitation_delay": 0,
                "neigh6.delay_first_probe_time": 60}},
  ],
  "steps": [
    {"port": "h1", "note": "t=0: usnet's advertisement: default route via fe80::ff:fe00:96fe (600 s), MTU 1400, "
                           "the prefix on-link and SLAAC address 2001:db8:96::ff:fe00:9601, whose DAD probe goes "
                           "at once (from ::, no options); the solicitations end",
     "frame": USNET_RA, "gap_s": 1.5},
    {"port": "h1", "note": "t=1.5 s (DAD over at ~1 s): echo request from off-link 2001:db8:99::5: the reply goes "
                           "to the router's MAC with hop limit 64 (the advertisement's), from the SLAAC address",
     "frame": echo(1), "gap_s": 0.2},
    {"port": "h1", "note": "t=1.7 s: echo request from off-link again: replied the same way",
     "frame": echo(2)},
  ],
  "settle_s": 0.5,
}
