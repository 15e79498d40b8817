from scapy.all import (Ether, IPv6, Raw, ICMPv6EchoRequest, ICMPv6ND_RA, ICMPv6ND_RS, ICMPv6ND_NA, ICMPv6NDOptSrcLLAddr,
                       ICMPv6NDOptDstLLAddr, ICMPv6NDOptMTU, ICMPv6NDOptPrefixInfo)
from scapy.utils6 import in6_mactoifaceid
# Router advertisements as a Linux host takes them. The DUT is one port, h1, of a namespace that does not forward
# (all/default/h1 forwarding 0) and accepts RAs (accept_ra 1). Its link-local address went through DAD and its
# first router solicitation went out before the capture opened (the recorder waits until no address is tentative,
# then 0.3 s); router_solicitation_interval 1 s makes the next one fall inside the first 1.5 s.
#   router_solicitation_delay 0: DAD starts without Linux's random delay (below router_solicitation_delay);
#   enhanced_dad 0 (on h1 and on all: Linux adds the nonce when either is 1): DAD probes carry no random nonce;
#   neigh6.delay_first_probe_time 60: the router's entry, once used, stays in DELAY for the whole scenario
#   (no unicast probes to time).
H1, RT, H2 = "02:00:00:00:90:01", "02:00:00:00:90:fe", "02:00:00:00:90:0b"


def link_local(mac):
    return "fe80::" + in6_mactoifaceid(mac)


H1_LL, RT_LL = link_local(H1), link_local(RT)
PREFIX = "2001:db8:1::"
H1_SLAAC = PREFIX + in6_mactoifaceid(H1)            # 2001:db8:1::ff:fe00:9001
FAR = "2001:db8:99::5"                              # off-link: reachable only through a default router
NEAR, NEAR_MAC = PREFIX + "99", H2                  # on-link by the advertised prefix


def ra(lifetime, hop_limit=32, mtu=1400, valid=3600, preferred=1800):
    return (Ether(src=RT, dst="33:33:00:00:00:01") / IPv6(src=RT_LL, dst="ff02::1", hlim=255) /
            ICMPv6ND_RA(chlim=hop_limit, routerlifetime=lifetime, reachabletime=0, retranstimer=0) /
            ICMPv6NDOptSrcLLAddr(lladdr=RT) / ICMPv6NDOptMTU(mtu=mtu) /
            ICMPv6NDOptPrefixInfo(prefix=PREFIX, prefixlen=64, L=1, A=1, validlifetime=valid,
                                  preferredlifetime=preferred))


def echo(src, src_mac, seq):
    return (Ether(src=src_mac, dst=H1) / IPv6(src=src, dst=H1_SLAAC, hlim=60) /
            ICMPv6EchoRequest(id=0x4242, seq=seq) / Raw(b"ra-%02d" % seq))


def na_from_router(router_flag):
    return (Ether(src=RT, dst="33:33:00:00:00:01") / IPv6(src=RT_LL, dst="ff02::1", hlim=255) /
            ICMPv6ND_NA(tgt=RT_LL, R=router_flag, S=0, O=1) / ICMPv6NDOptDstLLAddr(lladdr=RT))


SCENARIO = {
  "name": "host6-ra",
  "device": "router",
  "router": {
    "sysctl": {"net.ipv6.conf.all.forwarding": 0, "net.ipv6.conf.default.forwarding": 0,
               "net.ipv6.conf.all.enhanced_dad": 0},
  },
  "ports": [
    {"name": "h1", "mac": H1, "addresses": ["fd00:90::1/64"],
     "sysctl": {"ipv6.forwarding": 0, "ipv6.accept_ra": 1, "ipv6.accept_dad": 1, "ipv6.enhanced_dad": 0,
                "ipv6.router_solicitations": -1, "ipv6.router_solicitation_interval": 1,
                "ipv6.router_solicitation_delay": 0, "neigh6.delay_first_probe_time": 60}},
  ],
  "steps": [
    {"port": "h1", "note": "t=0: a router solicitation from another host (with its link-layer address): a host "
                           "neither answers it nor learns from it",
     "frame": (Ether(src=H2, dst="33:33:00:00:00:02") / IPv6(src=link_local(H2), dst="ff02::2", hlim=255) /
               ICMPv6ND_RS() / ICMPv6NDOptSrcLLAddr(lladdr=H2)), "gap_s": 1.5},
    {"port": "h1", "note": "t=1.5 s. Before it, at ~0.7 s: the second router solicitation (the first left at link "
                           "up, before the capture), from h1's link-local to ff02::2, hop limit 255, with a source "
                           "link-layer option. The RA (router lifetime 4 s, cur hop limit 32, MTU 1400, prefix "
                           "2001:db8:1::/64 L+A): default route via the router's link-local, hop limit 32, the "
                           "prefix on-link, SLAAC address 2001:db8:1::ff:fe00:9001 tentative: its DAD NS at once, "
                           "from ::, to ff02::1:ff00:9001, no options; no more RS",
     "frame": ra(lifetime=4), "gap_s": 0.3},
    {"port": "h1", "note": "t=1.8 s: echo request to the SLAAC address while it is tentative: not accepted, no reply",
     "frame": echo(FAR, RT, 1), "gap_s": 1.0},
    {"port": "h1", "note": "t=2.8 s (DAD over at ~2.5 s): echo request from off-link 2001:db8:99::5: the reply goes "
                           "to the router's MAC (the RA's source link-layer option made its entry), hop limit 32 "
                           "(the RA's), from the SLAAC address",
     "frame": echo(FAR, RT, 2), "gap_s": 0.2},
    {"port": "h1", "note": "t=3.0 s: echo request from on-link 2001:db8:1::99: the reply waits for an NS for "
                           "2001:db8:1::99 from the SLAAC address (the advertised prefix is on-link)",
     "frame": echo(NEAR, NEAR_MAC, 3), "gap_s": 0.1},
    {"port": "h1", "note": "t=3.1 s: 2001:db8:1::99's solicited NA: the queued reply goes to it",
     "frame": (Ether(src=NEAR_MAC, dst=H1) / IPv6(src=NEAR, dst=H1_SLAAC, hlim=255) /
               ICMPv6ND_NA(tgt=NEAR, R=0, S=1, O=1) / ICMPv6NDOptDstLLAddr(lladdr=NEAR_MAC)), "gap_s": 0.2},
    {"port": "h1", "note": "t=3.3 s: an NA from the router's link-local with the router flag clear: the router "
                           "became a host, so its default route is removed",
     "frame": na_from_router(0), "gap_s": 0.2},
    {"port": "h1", "note": "t=3.5 s: echo request from off-link: no default route, no reply",
     "frame": echo(FAR, RT, 4), "gap_s": 0.3},
    {"port": "h1", "note": "t=3.8 s: a second RA, router lifetime 2 s: the default route is back until ~5.8 s",
     "frame": ra(lifetime=2), "gap_s": 0.4},
    {"port": "h1", "note": "t=4.2 s: echo request from off-link: reply through the router again",
     "frame": echo(FAR, RT, 5), "gap_s": 2.3},
    {"port": "h1", "note": "t=6.5 s: the default route expired at ~5.8 s: no reply",
     "frame": echo(FAR, RT, 6), "gap_s": 0.3},
    {"port": "h1", "note": "t=6.8 s: an RA with router lifetime 0 (not a default router) and the prefix again: "
                           "no default route; the SLAAC address stays (no second DAD)",
     "frame": ra(lifetime=0), "gap_s": 0.3},
    {"port": "h1", "note": "t=7.1 s: echo request from on-link 2001:db8:1::99: replied at once (its entry is known)",
     "frame": echo(NEAR, NEAR_MAC, 7)},
  ],
  "settle_s": 0.5,
}
