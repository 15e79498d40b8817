#!/usr/bin/env python3
"""Unit tests of the recorder's input handling that need neither root nor scapy:
`/usr/bin/python3 tools/oracle/test_recorder_input.py` (or `python3 -m unittest` in tools/oracle)."""
import os
import sys
import unittest

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kernel_dut  # noqa: E402
import scenario_input  # noqa: E402


def router(addresses=("198.18.1.1/24",), routes=(), neighbors=()):
    return {"device": "router",
            "ports": [{"name": "r1", "mac": "02:00:00:00:00:01", "addresses": list(addresses)}],
            "router": {"routes": list(routes), "neighbors": list(neighbors)}}


class UsesIpv6Test(unittest.TestCase):
    def test_ipv4_only_router_keeps_the_ipv4_baseline(self):
        cfg = router(routes=["198.18.9.0/24 via 198.18.1.2 dev r1", "blackhole 198.18.7.0/24"],
                     neighbors=[{"ip": "198.18.1.2", "mac": "02:00:00:00:00:02", "dev": "r1"}])
        self.assertFalse(kernel_dut.uses_ipv6(cfg))
        self.assertEqual(kernel_dut.ROUTER_BASELINE, kernel_dut.router_baseline(cfg))
        self.assertEqual(1, kernel_dut.router_baseline(cfg)["net.ipv6.conf.all.disable_ipv6"])

    def test_an_ipv6_address_route_or_neighbour_turns_ipv6_on(self):
        for cfg in (router(addresses=["198.18.1.1/24", "2001:db8:1::1/64"]),
                    router(routes=["unreachable 2001:db8:9::/64"]),
                    router(routes=["prohibit 2001:db8:a::/64"]),
                    router(routes=["default via fe80::2 dev r1"]),
                    router(neighbors=[{"ip": "fe80::2", "mac": "02:00:00:00:00:02", "dev": "r1"}])):
            settings = kernel_dut.router_baseline(cfg)
            self.assertTrue(kernel_dut.uses_ipv6(cfg), cfg)
            self.assertEqual(0, settings["net.ipv6.conf.all.disable_ipv6"])
            self.assertEqual(0, settings["net.ipv6.conf.default.accept_dad"])
            self.assertEqual(0, settings["net.ipv6.auto_flowlabels"])
            self.assertEqual(1, settings["net.ipv4.ip_forward"])

    def test_an_ipv4_default_route_is_not_ipv6(self):
        self.assertFalse(kernel_dut.uses_ipv6(router(routes=["default via 198.18.1.2 dev r1"])))

    def test_a_bridge_never_uses_ipv6(self):
        self.assertFalse(kernel_dut.uses_ipv6({"device": "bridge", "ports": [{"name": "p1"}]}))


class SysctlKeysTest(unittest.TestCase):
    def test_port_knobs_name_their_family(self):
        self.assertEqual("net.ipv4.conf.r1.proxy_arp", kernel_dut.port_sysctl_key("r1", "proxy_arp"))
        self.assertEqual("net.ipv6.conf.r1.mtu", kernel_dut.port_sysctl_key("r1", "ipv6.mtu"))
        self.assertEqual("net.ipv6.neigh.r1.retrans_time_ms", kernel_dut.port_sysctl_key("r1", "neigh6.retrans_time_ms"))
        self.assertEqual("net.ipv4.neigh.r1.ucast_solicit", kernel_dut.port_sysctl_key("r1", "neigh.ucast_solicit"))

    def test_per_port_ipv6_keys_split_at_the_port_and_wait_for_it(self):
        self.assertEqual("/proc/sys/net/ipv6/neigh/r.1/base_reachable_time_ms",
                         kernel_dut._sysctl_path("net.ipv6.neigh.r.1.base_reachable_time_ms", ["r.1"]))
        before, after = kernel_dut._split_sysctls({"net.ipv6.neigh.r1.ucast_solicit": 3,
                                                   "net.ipv6.conf.r1.forwarding": 1,
                                                   "net.ipv6.ip6frag_time": 2}, ["r1"])
        self.assertEqual({"net.ipv6.ip6frag_time": 2}, before)
        self.assertEqual({"net.ipv6.neigh.r1.ucast_solicit", "net.ipv6.conf.r1.forwarding"}, set(after))


class AddressValidationTest(unittest.TestCase):
    def check(self, cfg):
        scenario_input.validate_config(cfg, "s.py", "SCENARIO")

    def refused(self, cfg):
        with self.assertRaises(scenario_input.ScenarioError) as e:
            self.check(cfg)
        return str(e.exception)

    def test_ipv6_addresses_next_to_ipv4_are_accepted(self):
        self.check(router(addresses=["198.18.1.1/24", "2001:db8:1::1/64", "fd00:1::1/64"],
                          neighbors=[{"ip": "fe80::ff:fe00:2", "mac": "02:00:00:00:00:02", "dev": "r1"}]))

    def test_ipv6_outside_the_documentation_ula_and_link_local_ranges_is_refused(self):
        msg = self.refused(router(addresses=["2a00:1450::1/64"]))
        self.assertIn("SCENARIO['ports'][0]['addresses'][0]", msg)
        self.assertIn("2001:db8::/32", msg)
        msg = self.refused(router(neighbors=[{"ip": "2a00:1450::2", "mac": "02:00:00:00:00:02", "dev": "r1"}]))
        self.assertIn("['router']['neighbors'][0]['ip']", msg)

    def test_a_port_address_needs_its_prefix_length(self):
        msg = self.refused(router(addresses=["2001:db8:1::1"]))
        self.assertIn("2001:db8:1::1/64", msg)

    def test_garbage_is_named(self):
        msg = self.refused(router(addresses=["2001:db8::zz/64"]))
        self.assertIn("expected an address like", msg)
        msg = self.refused(router(neighbors=[{"ip": "198.18.1.300", "mac": "02:00:00:00:00:02", "dev": "r1"}]))
        self.assertIn("['ip']", msg)


class NetfilterInputTest(unittest.TestCase):
    def check(self, cfg):
        scenario_input.validate_config(cfg, "s.py", "SCENARIO")

    def test_a_ruleset_must_be_text(self):
        cfg = router()
        cfg["router"]["nftables"] = ["table ip t {}"]
        with self.assertRaises(scenario_input.ScenarioError) as e:
            self.check(cfg)
        self.assertIn("SCENARIO['router']['nftables']", str(e.exception))
        cfg["router"]["nftables"] = "table ip t {\n}\n"
        self.check(cfg)

    def test_a_ruleset_or_a_conntrack_sysctl_makes_a_netfilter_scenario(self):
        cfg = router()
        self.assertFalse(kernel_dut.uses_netfilter(cfg))
        cfg["router"]["sysctl"] = {"net.netfilter.nf_conntrack_tcp_loose": 0}
        self.assertTrue(kernel_dut.uses_netfilter(cfg))
        cfg = router()
        cfg["router"]["nftables"] = "table ip t {\n}\n"
        self.assertTrue(kernel_dut.uses_netfilter(cfg))

    def test_pending_names_what_is_missing(self):
        cfg = router()
        cfg["pending"] = ""
        with self.assertRaises(scenario_input.ScenarioError) as e:
            self.check(cfg)
        self.assertIn("SCENARIO['pending']", str(e.exception))
        cfg["pending"] = "netfilter"
        self.check(cfg)


if __name__ == "__main__":
    unittest.main()
