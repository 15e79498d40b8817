"""What to record: the device under test's configuration and the frames to inject, each at its time.

Two sources give the same thing:
  - a scenario script (SCENARIO = {...} with scapy frames and gaps), for a new fixture;
  - an existing fixture (scenario.json plus in/*.pcap), to record it again on this kernel.
Every problem is reported with the file and the key path, e.g. "x.py: SCENARIO['ports'][1]['mac']: missing".
"""
import ipaddress
import json
import os
import re
import runpy

import pcapfile

# Frames of a script go in this far apart unless a step says otherwise (gap_s).
DEFAULT_GAP_S = 0.05
# Fixtures start their input at a fixed epoch, so re-recording the same script writes the same in/ bytes.
FIXTURE_EPOCH = 1_700_000_000.0
DEFAULT_SETTLE_S = 1.0

_IFNAME = re.compile(r"[A-Za-z0-9_.-]{1,15}$")
_MAC = re.compile(r"([0-9a-fA-F]{2}:){5}[0-9a-fA-F]{2}$")


class ScenarioError(Exception):
    """Bad input: the message names the file and key."""


class Injection:
    """One frame to send into the DUT on `port`, `at_s` seconds after the first one."""

    def __init__(self, at_s, port, frame):
        self.at_s = at_s
        self.port = port
        self.frame = frame


class Recording:
    """The DUT config (scenario.json without `linux` and `steps`), the input, and how long to run after it."""

    def __init__(self, config, injections, tail_s, epoch, steps_summary, linux_sysctl=None):
        self.config = config
        # A fixture's linux.sysctl is part of its DUT: applied over the recorder's baseline.
        self.linux_sysctl = linux_sysctl or {}
        self.injections = injections
        self.tail_s = tail_s
        self.epoch = epoch
        self.steps_summary = steps_summary

    def ports(self):
        return [p["name"] for p in self.config["ports"]]


def _fail(where, key, msg):
    raise ScenarioError(f"{where}: {key}: {msg}")


def _number(where, key, v, minimum=None):
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        _fail(where, key, f"expected a number, got {v!r}")
    if minimum is not None and v < minimum:
        _fail(where, key, f"must be at least {minimum}, got {v}")
    return v


def _mac(where, key, v):
    if not isinstance(v, str) or not _MAC.match(v):
        _fail(where, key, f"expected a MAC address like 02:00:00:00:00:01, got {v!r}")
    if int(v[:2], 16) & 1:
        _fail(where, key, f"{v} is a multicast address; a device needs a unicast MAC")
    return v.lower()


def _sysctls(where, key, v):
    if v is None:
        return {}
    if not isinstance(v, dict):
        _fail(where, key, "expected a mapping of sysctl keys to values")
    for k, val in v.items():
        if not isinstance(k, str) or isinstance(val, (dict, list)) or val is None:
            _fail(where, f"{key}[{k!r}]", "expected a sysctl key with a number or string value")
    return v


# IPv6 scenarios keep to the documentation prefix, unique local addresses and link-local ones.
IPV6_ALLOWED = [ipaddress.ip_network(n) for n in ("2001:db8::/32", "fd00::/8", "fe80::/10")]


def _address(where, key, v, with_prefix):
    """An IPv4 or IPv6 address (`with_prefix`: with its /len, as `ip address add` takes it)."""
    try:
        a = ipaddress.ip_interface(v) if with_prefix else ipaddress.ip_address(v)
    except ValueError:
        form = "a.b.c.d/len or 2001:db8:1::1/64" if with_prefix else "a.b.c.d or 2001:db8:1::2"
        _fail(where, key, f"expected an address like {form}, got {v!r}")
    if with_prefix and "/" not in v:
        _fail(where, key, f"{v}: give the prefix length too, e.g. {v}/{a.max_prefixlen if a.version == 4 else 64}")
    ip = a.ip if with_prefix else a
    if ip.version == 6 and not any(ip in n for n in IPV6_ALLOWED):
        _fail(where, key, f"{v}: IPv6 scenarios use 2001:db8::/32, fd00::/8 or link-local fe80::/10 addresses")
    return v


def _nftables(where, key, v):
    """The DUT's ruleset as `nft -f` reads it; the recorder loads it after the ports and sysctls are set."""
    if v is not None and (not isinstance(v, str) or not v.strip()):
        _fail(where, key, "expected the ruleset text for nft -f (a non-empty string)")


def _strings(where, key, v):
    if v is None:
        return []
    if not isinstance(v, list) or not all(isinstance(s, str) for s in v):
        _fail(where, key, "expected a list of strings")
    return v


def validate_config(cfg, where, root):
    """Checks the DUT part of a scenario (device, ports, bridge or router); `root` names it in messages."""
    if not isinstance(cfg, dict):
        _fail(where, root, "expected a mapping")
    device = cfg.get("device")
    if device not in ("bridge", "router"):
        _fail(where, f"{root}['device']", f"expected 'bridge' or 'router', got {device!r}")
    ports = cfg.get("ports")
    if not isinstance(ports, list) or not ports:
        _fail(where, f"{root}['ports']", "expected a non-empty list of ports")
    names = set()
    for i, p in enumerate(ports):
        k = f"{root}['ports'][{i}]"
        if not isinstance(p, dict):
            _fail(where, k, "expected a mapping with name and mac")
        name = p.get("name")
        if not isinstance(name, str) or not _IFNAME.match(name) or name in ("lo", "br0"):
            _fail(where, k + "['name']", f"{name!r} is not a usable interface name (1-15 of A-Z a-z 0-9 _ . -, "
                                         "not lo or br0)")
        if name in names:
            _fail(where, k + "['name']", f"port {name} is listed twice")
        names.add(name)
        if "mac" not in p:
            _fail(where, k + "['mac']", "missing")
        _mac(where, k + "['mac']", p["mac"])
        if "mtu" in p:
            mtu = _number(where, k + "['mtu']", p["mtu"], 68)
            if mtu != int(mtu) or mtu > 65535:
                _fail(where, k + "['mtu']", f"expected an integer 68..65535, got {mtu}")
        addresses = _strings(where, k + "['addresses']", p.get("addresses"))
        if addresses and device == "bridge":
            _fail(where, k + "['addresses']", "bridge ports carry no addresses")
        for j, a in enumerate(addresses):
            _address(where, f"{k}['addresses'][{j}]", a, True)
        _sysctls(where, k + "['sysctl']", p.get("sysctl"))
    if device == "bridge":
        b = cfg.get("bridge")
        if not isinstance(b, dict):
            _fail(where, f"{root}['bridge']", "missing (a bridge needs at least its mac)")
        _mac(where, f"{root}['bridge']['mac']", b.get("mac"))
        _number(where, f"{root}['bridge']['ageing_time_s']", b.get("ageing_time_s", 300), 0)
        if b.get("stp", False):
            _fail(where, f"{root}['bridge']['stp']", "fixtures run with STP off (usnet has no STP)")
        if not isinstance(b.get("multicast_snooping", False), bool):
            _fail(where, f"{root}['bridge']['multicast_snooping']", "expected true or false")
        if "fdb_max_learned" in b:
            _number(where, f"{root}['bridge']['fdb_max_learned']", b["fdb_max_learned"], 0)
        _sysctls(where, f"{root}['bridge']['sysctl']", b.get("sysctl"))
        _nftables(where, f"{root}['bridge']['nftables']", b.get("nftables"))
    else:
        r = cfg.get("router", {})
        if not isinstance(r, dict):
            _fail(where, f"{root}['router']", "expected a mapping")
        _strings(where, f"{root}['router']['routes']", r.get("routes"))
        for i, n in enumerate(r.get("neighbors", []) or []):
            k = f"{root}['router']['neighbors'][{i}]"
            if not isinstance(n, dict) or not all(isinstance(n.get(x), str) for x in ("ip", "mac", "dev")):
                _fail(where, k, "expected a mapping with ip, mac and dev")
            _mac(where, k + "['mac']", n["mac"])
            _address(where, k + "['ip']", n["ip"], False)
            if n["dev"] not in names:
                _fail(where, k + "['dev']", f"no port named {n['dev']}")
        _sysctls(where, f"{root}['router']['sysctl']", r.get("sysctl"))
        _nftables(where, f"{root}['router']['nftables']", r.get("nftables"))
    if "settle_s" in cfg:
        _number(where, f"{root}['settle_s']", cfg["settle_s"], 0)
    if "pending" in cfg and (not isinstance(cfg["pending"], str) or not cfg["pending"]):
        _fail(where, f"{root}['pending']", "expected the name of what usnet lacks to replay it, e.g. 'netfilter'")


def _dut_config(cfg):
    return {k: v for k, v in cfg.items() if k not in ("steps", "linux")}


def from_script(path):
    """Loads SCENARIO from a scenario script; each step's frame is turned into bytes here, once."""
    where = os.path.basename(path)
    if not os.path.isfile(path):
        raise ScenarioError(f"{path}: no such scenario script")
    try:
        namespace = runpy.run_path(path)
    except ImportError as e:
        raise ScenarioError(f"{where}: cannot import {e.name or e}: a scenario script needs python3-scapy "
                            "(apt-get install python3-scapy)")
    except Exception as e:  # the script itself is broken: say where
        raise ScenarioError(f"{where}: the script failed: {type(e).__name__}: {e}")
    sc = namespace.get("SCENARIO")
    if sc is None:
        raise ScenarioError(f"{where}: defines no SCENARIO = {{...}}")
    validate_config(sc, where, "SCENARIO")
    steps = sc.get("steps")
    if not isinstance(steps, list) or not steps:
        _fail(where, "SCENARIO['steps']", "expected a non-empty list of steps")
    ports = {p["name"] for p in sc["ports"]}
    injections, summary = [], []
    t = 0.0
    tail = 0.0
    for i, st in enumerate(steps):
        k = f"SCENARIO['steps'][{i}]"
        if not isinstance(st, dict):
            _fail(where, k, "expected a mapping")
        if "advance_s" in st:
            adv = _number(where, k + "['advance_s']", st["advance_s"], 0)
            t += adv
            tail += adv
            summary.append({"advance_s": adv})
            continue
        if st.get("port") not in ports:
            _fail(where, k + "['port']", f"expected one of {sorted(ports)}, got {st.get('port')!r}")
        if "frame" not in st:
            _fail(where, k + "['frame']", "missing")
        try:
            frame = bytes(st["frame"])
        except Exception as e:
            _fail(where, k + "['frame']", f"cannot be turned into bytes: {e}")
        if len(frame) < 14:
            _fail(where, k + "['frame']", f"{len(frame)} bytes is shorter than an Ethernet header")
        injections.append(Injection(t, st["port"], frame))
        summary.append({"port": st["port"], "note": st.get("note", ""), "len": len(frame)})
        gap = _number(where, k + "['gap_s']", st.get("gap_s", DEFAULT_GAP_S), 0)
        t += gap
        # After the last frame the DUT runs for the advances that follow it plus settle_s, as usnet replay
        # does: the last frame's own gap leads to no step, so it is not waited.
        tail = 0.0
    settle = sc.get("settle_s", DEFAULT_SETTLE_S)
    return Recording(_dut_config(sc), injections, tail + settle, FIXTURE_EPOCH, summary)


def from_fixture(fixture):
    """Loads a fixture's scenario.json and in/*.pcap: the same DUT and the same frames at the same times."""
    path = os.path.join(fixture, "scenario.json")
    if not os.path.isfile(path):
        raise ScenarioError(f"{fixture}: not a fixture directory (no scenario.json)")
    try:
        with open(path) as f:
            sc = json.load(f)
    except json.JSONDecodeError as e:
        raise ScenarioError(f"{path}: not valid JSON: {e}")
    validate_config(sc, path, "scenario")
    in_dir = os.path.join(fixture, "in")
    if not os.path.isdir(in_dir):
        raise ScenarioError(f"{fixture}: no in/ directory")
    order = [p["name"] for p in sc["ports"]]
    frames = []
    for fn in sorted(os.listdir(in_dir)):
        if not fn.endswith(".pcap"):
            continue
        port = fn[:-len(".pcap")]
        if port not in order:
            raise ScenarioError(f"{in_dir}/{fn}: no port named {port} in scenario.json")
        try:
            for i, (ts, frame) in enumerate(pcapfile.read(os.path.join(in_dir, fn))):
                frames.append((ts, order.index(port), i, port, frame))
        except pcapfile.PcapError as e:
            raise ScenarioError(str(e))
    if not frames:
        raise ScenarioError(f"{in_dir}: no input frames")
    # Global order is by timestamp; equal stamps go in port order, then file order (as usnet replay does).
    frames.sort(key=lambda x: (x[0], x[1], x[2]))
    epoch = frames[0][0]
    injections = [Injection(ts - epoch, port, frame) for ts, _, _, port, frame in frames]
    trailing = 0.0
    for st in sc.get("steps", []):
        trailing = trailing + st["advance_s"] if isinstance(st, dict) and "advance_s" in st else 0.0
    settle = sc.get("settle_s", DEFAULT_SETTLE_S)
    linux = sc.get("linux") or {}
    if not isinstance(linux, dict):
        _fail(path, "scenario['linux']", "expected a mapping")
    linux_sysctl = _sysctls(path, "scenario['linux']['sysctl']", linux.get("sysctl"))
    return Recording(_dut_config(sc), injections, trailing + settle, epoch, sc.get("steps", []), linux_sysctl)
