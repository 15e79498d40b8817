from scapy.all import (Ether, IPv6, IPv6ExtHdrHopByHop, RouterAlert, ICMPv6MLQuery, ICMPv6MLQuery2)
# The MLD listener of an IPv6 router port answering queries (MLDv2 by default, force_mld_version 0).
# The baseline's accept_dad 0 and 1 ms unsolicited report intervals keep the link-up reports out of the capture;
# a maximum response delay of 1 ms makes Linux's random response delay (0..max-1 jiffies) always 0, so each
# answer comes two jiffies after its query. The port's groups: ff02::1 (never reported), ff02::2 (forwarding),
# the solicited-node groups of the link-local address, the global address and the subnet-router anycast address.
Q = "02:00:00:00:71:09"
Q_LL = "fe80::71:9"
R1, R2 = "02:00:00:00:70:01", "02:00:00:00:70:02"


def query(dst, dst_mac, msg):
    return (Ether(src=Q, dst=dst_mac) / IPv6(src=Q_LL, dst=dst, hlim=1)
            / IPv6ExtHdrHopByHop(options=[RouterAlert(value=0)]) / msg)


def s(note, frame, gap=0.3):
    return {"port": "r1", "note": note, "frame": frame, "gap_s": gap}


SCENARIO = {
  "name": "router6-mld",
  "device": "router",
  "ports": [
    {"name": "r1", "mac": R1, "addresses": ["2001:db8:71::1/64"]},
    {"name": "r2", "mac": R2, "addresses": ["2001:db8:72::1/64"]},
  ],
  "steps": [
    s("MLDv2 general query: one MLDv2 report, an is-exclude record of no source for each reported group",
      query("ff02::1", "33:33:00:00:00:01", ICMPv6MLQuery2(mrd=1, mladdr="::", QRV=2, QQIC=125))),
    s("MLDv2 query for ff02::2: a report for ff02::2 only",
      query("ff02::2", "33:33:00:00:00:02", ICMPv6MLQuery2(mrd=1, mladdr="ff02::2", QRV=2, QQIC=125))),
    s("MLDv2 query for ff02::1:ff00:99, not joined: nothing",
      query("ff02::1:ff00:99", "33:33:ff:00:00:99", ICMPv6MLQuery2(mrd=1, mladdr="ff02::1:ff00:99", QRV=2, QQIC=125))),
    s("MLDv2 query for ff02::1: never reported",
      query("ff02::1", "33:33:00:00:00:01", ICMPv6MLQuery2(mrd=1, mladdr="ff02::1", QRV=2, QQIC=125))),
    s("MLDv1 general query: the port falls back to MLDv1; an MLDv1 report per group, each to its group",
      query("ff02::1", "33:33:00:00:00:01", ICMPv6MLQuery(mrd=1, mladdr="::"))),
    s("MLDv2 general query while an MLDv1 querier is present: MLDv1 reports again",
      query("ff02::1", "33:33:00:00:00:01", ICMPv6MLQuery2(mrd=1, mladdr="::", QRV=2, QQIC=125))),
    s("MLDv1 query for ff02::2: an MLDv1 report for ff02::2",
      query("ff02::2", "33:33:00:00:00:02", ICMPv6MLQuery(mrd=1, mladdr="ff02::2"))),
    s("MLDv2 query from a global source: ignored",
      Ether(src=Q, dst="33:33:00:00:00:01") / IPv6(src="2001:db8:71::9", dst="ff02::1", hlim=1)
      / IPv6ExtHdrHopByHop(options=[RouterAlert(value=0)]) / ICMPv6MLQuery2(mrd=1, mladdr="::", QRV=2, QQIC=125)),
  ],
}
