"""The device under test as Linux: a bridge or an IPv4/IPv6 router in a network namespace of its own.

Each DUT port is one end of a veth pair; the other end ("tp0", "tp1", ... in port order) lives in a tester
namespace, where the recorder injects and captures. The tester namespace is made mute (no IPv6, no ARP, no
forwarding, no echo replies) so that every frame entering the DUT is one the scenario sent. Nothing is
created in the namespace the recorder was started from; both namespaces are deleted by name afterwards.
"""
import contextlib
import ctypes
import json
import os
import secrets
import shutil
import subprocess
import time

CLONE_NEWNET = 0x40000000
NAME_PREFIX = "usnet-or-"

# Settings every router fixture runs with: forwarding on, ICMP never rate limited, no reverse-path
# filtering, TTL 64, no IPv6 (so no DAD, router solicitations or MLD reports among the captured frames).
ROUTER_BASELINE = {
    "net.ipv4.ip_forward": 1,
    "net.ipv4.icmp_ratelimit": 0,
    "net.ipv4.icmp_msgs_per_sec": 100000,
    "net.ipv4.conf.all.rp_filter": 0,
    "net.ipv4.conf.default.rp_filter": 0,
    "net.ipv4.ip_default_ttl": 64,
    "net.ipv6.conf.all.disable_ipv6": 1,
    "net.ipv6.conf.default.disable_ipv6": 1,
}
# A router scenario that uses IPv6 (an IPv6 address, route or neighbour) runs with ROUTER_BASELINE minus its
# two disable_ipv6 keys, plus these. Each one takes a source of randomness or of unrequested frames out of the
# recording (why, in docs/oracle.md "IPv6"):
#  - accept_dad=0: no duplicate address detection, so no DAD neighbour solicitations (with their random delay
#    and, on kernels with enhanced DAD, random nonce) and no tentative addresses when the first step arrives;
#  - forwarding=1 makes it a router (the NA router flag, no RS, no SLAAC); accept_ra=0 and
#    router_solicitations=0 say so again for any later interface;
#  - mldv1/mldv2_unsolicited_report_interval=1 ms: the MLD reports for the groups an interface joins at link
#    up (all-routers, solicited-node) and their retransmission, normally spread over a random 0..1 s (MLDv2)
#    or 0..10 s (MLDv1), are all out within a few jiffies; the recorder waits for them to pass before it starts capturing;
#  - addr_gen_mode=0: link-local addresses are EUI-64 from the port's MAC (not stable-privacy or random);
#  - auto_flowlabels=0: the router's own packets (ICMPv6 errors, NS) carry flow label 0 rather than a hash
#    of the flow keyed by a per-boot random secret;
#  - flowlabel_reflect=0 (the default, stated): an echo reply does not copy the request's flow label;
#  - icmp.ratelimit=0: no per-destination ICMPv6 token bucket (default one error per second per host);
#  - hop_limit=64 (the default, stated): the hop limit of the router's own packets other than ND (255).
ROUTER_IPV6_BASELINE = {
    "net.ipv6.conf.all.disable_ipv6": 0,
    "net.ipv6.conf.default.disable_ipv6": 0,
    "net.ipv6.conf.all.forwarding": 1,
    "net.ipv6.conf.default.forwarding": 1,
    "net.ipv6.conf.all.accept_dad": 0,
    "net.ipv6.conf.default.accept_dad": 0,
    "net.ipv6.conf.all.accept_ra": 0,
    "net.ipv6.conf.default.accept_ra": 0,
    "net.ipv6.conf.all.router_solicitations": 0,
    "net.ipv6.conf.default.router_solicitations": 0,
    "net.ipv6.conf.all.mldv1_unsolicited_report_interval": 1,
    "net.ipv6.conf.default.mldv1_unsolicited_report_interval": 1,
    "net.ipv6.conf.all.mldv2_unsolicited_report_interval": 1,
    "net.ipv6.conf.default.mldv2_unsolicited_report_interval": 1,
    "net.ipv6.conf.all.addr_gen_mode": 0,
    "net.ipv6.conf.default.addr_gen_mode": 0,
    "net.ipv6.conf.all.hop_limit": 64,
    "net.ipv6.conf.default.hop_limit": 64,
    "net.ipv6.auto_flowlabels": 0,
    "net.ipv6.flowlabel_reflect": 0,
    "net.ipv6.icmp.ratelimit": 0,
}
# After the last MLD report of link up (see mldv2_unsolicited_report_interval above) before capturing starts.
IPV6_QUIET_S = 0.3
BRIDGE_BASELINE = {
    "net.ipv6.conf.all.disable_ipv6": 1,
    "net.ipv6.conf.default.disable_ipv6": 1,
}
# With br_netfilter loaded a new namespace starts with these on, which validates and trims bridged IP
# frames; a bridge fixture has them off unless its bridge.sysctl turns them on.
BRIDGE_NETFILTER_OFF = {
    "net.bridge.bridge-nf-call-iptables": 0,
    "net.bridge.bridge-nf-call-ip6tables": 0,
}
TESTER_MUTE = {
    "net.ipv6.conf.all.disable_ipv6": 1,
    "net.ipv6.conf.default.disable_ipv6": 1,
    "net.ipv4.ip_forward": 0,
    "net.ipv4.icmp_echo_ignore_all": 1,
}

# Connection tracking settings exist in a namespace only once nf_conntrack is loaded (built in, or modprobe).
CONNTRACK_PREFIX = "net.netfilter.nf_conntrack_"
# The conntrack table's size is one for the whole machine: a namespace other than the first sees these read-only.
# A scenario that needs them small (a table-full fixture) may have the recorder set them in the namespace it
# runs in, which must be the initial one, for the length of the recording, when HOST_CONNTRACK_ENV is 1; the
# previous values are put back afterwards. Meanwhile every namespace on the machine has that limit.
HOST_GLOBAL_CONNTRACK = ("net.netfilter.nf_conntrack_max", "net.netfilter.nf_conntrack_buckets")
HOST_CONNTRACK_ENV = "USNET_ORACLE_HOST_CONNTRACK"
# What the recorder reads from the DUT after the run, next to the fixture (linux/<file>).
NFT_LIST_FILE = "nft-list-ruleset.txt"
CONNTRACK_LIST_FILE = "conntrack-L.txt"

_libc = ctypes.CDLL(None, use_errno=True)


class KernelError(Exception):
    """The kernel (or iproute2) refused a step of the set-up."""


@contextlib.contextmanager
def inside(netns):
    """Runs the block with this thread in network namespace `netns`; sockets opened there stay in it."""
    home = os.open("/proc/self/ns/net", os.O_RDONLY)
    target = os.open(f"/run/netns/{netns}", os.O_RDONLY)
    try:
        if _libc.setns(target, CLONE_NEWNET) != 0:
            err = ctypes.get_errno()
            raise KernelError(f"cannot enter namespace {netns}: {os.strerror(err)}")
        try:
            yield
        finally:
            if _libc.setns(home, CLONE_NEWNET) != 0:
                raise KernelError("cannot return to the original network namespace")
    finally:
        os.close(target)
        os.close(home)


PER_PORT_PREFIXES = ("net.ipv4.conf.", "net.ipv4.neigh.", "net.ipv6.conf.", "net.ipv6.neigh.")
# Words that may come before a route's destination in `ip route add` syntax.
ROUTE_TYPES = ("unicast", "unreachable", "blackhole", "prohibit", "throw", "local")


def is_ipv6(text):
    """An address, prefix or route in ip(8) syntax names IPv6 when it holds a colon (an IPv6 address does)."""
    return ":" in text


def uses_ipv6(config):
    """Whether a router scenario needs IPv6 on: an IPv6 address on a port, an IPv6 route or neighbour."""
    if config.get("device") != "router":
        return False
    r = config.get("router") or {}
    return (any(is_ipv6(a) for p in config["ports"] for a in p.get("addresses") or [])
            or any(_route_is_ipv6(rt) for rt in r.get("routes") or [])
            or any(is_ipv6(n["ip"]) for n in r.get("neighbors") or []))


def _route_is_ipv6(route):
    """`2001:db8:3::/64 via ...`, `unreachable 2001:db8:9::/64`: the destination (the first word that is not
    a route type) decides, as it does for iproute2; `default` routes are IPv6 when their gateway is."""
    words = route.split()
    dest = next((w for w in words if w not in ROUTE_TYPES), "")
    if dest == "default":
        return any(is_ipv6(w) for w in words)
    return is_ipv6(dest)



def router_baseline(config):
    """The sysctls a router scenario runs with before its own: IPv4 only, or IPv4 and IPv6."""
    settings = dict(ROUTER_BASELINE)
    if uses_ipv6(config):
        settings.update(ROUTER_IPV6_BASELINE)
    return settings


def _sysctl_path(key, ports):
    """net.ipv4.conf.<port>.<knob> with dots in a port name is split at the port, not at every dot."""
    for prefix in PER_PORT_PREFIXES:
        if key.startswith(prefix):
            rest = key[len(prefix):]
            for port in ports:
                if rest.startswith(port + "."):
                    return "/proc/sys/" + prefix.replace(".", "/") + port + "/" + rest[len(port) + 1:].replace(".", "/")
    return "/proc/sys/" + key.replace(".", "/")


def write_sysctls(netns, settings, ports=()):
    """Writes sysctls in `netns` through /proc/sys (per namespace), so no sysctl binary is needed."""
    with inside(netns):
        for key, value in settings.items():
            path = _sysctl_path(key, ports)
            try:
                with open(path, "w") as f:
                    f.write(f"{value}\n")
            except FileNotFoundError:
                hint = " (load br_netfilter: modprobe br_netfilter)" if key.startswith("net.bridge.") else ""
                raise KernelError(f"sysctl {key}: no such setting in this kernel{hint}")
            except OSError as e:
                raise KernelError(f"sysctl {key}={value}: {e.strerror}")


def netfilter_tools_missing():
    """The programs a netfilter scenario needs that this machine lacks, as `apt-get install` package names."""
    return [pkg for prog, pkg in (("nft", "nftables"), ("conntrack", "conntrack")) if shutil.which(prog) is None]


def uses_netfilter(config):
    """Whether a scenario loads an nftables ruleset or sets connection tracking sysctls."""
    section = config.get(config.get("device")) or {}
    return bool(section.get("nftables")) or any(k.startswith(CONNTRACK_PREFIX) for k in section.get("sysctl") or {})


def has_sysctl(netns, key):
    with inside(netns):
        return os.path.exists(_sysctl_path(key, ()))


def ip_batch(netns, commands):
    """Runs `ip` commands in `netns` in one process; a failure names the command and iproute2's reason."""
    if not commands:
        return
    r = subprocess.run(["ip", "-n", netns, "-batch", "-"], input="\n".join(commands) + "\n",
                       capture_output=True, text=True)
    if r.returncode != 0:
        failed = "?"
        for line in r.stderr.splitlines():
            if line.startswith("Command failed -:"):
                n = int(line.rsplit(":", 1)[1])
                failed = commands[n - 1] if 0 < n <= len(commands) else failed
        reason = " ".join(l for l in r.stderr.splitlines() if not l.startswith("Command failed")).strip()
        raise KernelError(f"ip -n {netns} {failed}: {reason or 'failed'}")


def port_sysctl_key(port, knob):
    """A port's `sysctl` knob as a full key: `proxy_arp` is net.ipv4.conf.<port>.proxy_arp (as before IPv6);
    `ipv6.KNOB` is net.ipv6.conf.<port>.KNOB, `neigh.KNOB` net.ipv4.neigh.<port>.KNOB and `neigh6.KNOB`
    net.ipv6.neigh.<port>.KNOB."""
    for short, prefix in (("ipv6.", "net.ipv6.conf."), ("neigh6.", "net.ipv6.neigh."), ("neigh.", "net.ipv4.neigh.")):
        if knob.startswith(short):
            return f"{prefix}{port}.{knob[len(short):]}"
    return f"net.ipv4.conf.{port}.{knob}"


def _read_host(keys):
    values = {}
    for k in keys:
        try:
            with open(_sysctl_path(k, ())) as f:
                values[k] = f.read().strip()
        except OSError:
            pass
    return values


def _ensure_host_unchanged(before):
    """br_netfilter's settings are per namespace only since Linux 5.x; where they are global, writing them for
    the DUT would change the whole machine's bridging: put them back and refuse."""
    now = _read_host(before.keys())
    changed = [k for k, v in before.items() if now.get(k) != v]
    for k in changed:
        with open(_sysctl_path(k, ()), "w") as f:
            f.write(before[k] + "\n")
    if changed:
        raise KernelError(f"{', '.join(changed)}: not per network namespace on this kernel, so a bridge "
                          "fixture cannot set them without changing the whole machine (restored)")


def _split_sysctls(settings, ports):
    """Global keys can be set before the ports exist (defaults then reach them); per-port keys only after."""
    before, after = {}, {}
    for k, v in settings.items():
        per_port = any(k.startswith(f"{pre}{p}.") for p in ports
                       for pre in PER_PORT_PREFIXES)
        (after if per_port else before)[k] = v
    return before, after


class KernelDut:
    """The DUT and tester namespaces of one recording: `create()` builds them, `delete()` removes them."""

    def __init__(self, config, linux_sysctl=None):
        self.config = config
        self.linux_sysctl = linux_sysctl or {}
        tag = f"{os.getpid()}-{secrets.token_hex(2)}"
        self.dut_ns = f"{NAME_PREFIX}{tag}-dut"
        self.tester_ns = f"{NAME_PREFIX}{tag}-tst"
        self.created = []
        self.ports = [p["name"] for p in config["ports"]]
        self.tester_ifname = {p: f"tp{i}" for i, p in enumerate(self.ports)}
        self.applied_sysctls = {}
        self.host_restore = {}

    def _add_netns(self, name):
        # Listed before it exists: a signal between the kernel making it and this line must not leak it.
        self.created.append(name)
        r = subprocess.run(["ip", "netns", "add", name], capture_output=True, text=True)
        if r.returncode != 0:
            self.created.remove(name)
            raise KernelError(f"ip netns add {name}: {r.stderr.strip()}")

    def create(self):
        cfg = self.config
        self._add_netns(self.tester_ns)
        self._add_netns(self.dut_ns)
        write_sysctls(self.tester_ns, TESTER_MUTE)

        # Later layers win: the baseline, the fixture's linux.sysctl, then the scenario's own settings.
        if cfg["device"] == "router":
            settings = router_baseline(cfg)
            settings.update(self.linux_sysctl)
            settings.update(cfg.get("router", {}).get("sysctl", {}) or {})
        else:
            settings = dict(BRIDGE_BASELINE)
            if has_sysctl(self.dut_ns, "net.bridge.bridge-nf-call-iptables"):
                settings.update(BRIDGE_NETFILTER_OFF)
            settings.update(self.linux_sysctl)
            settings.update(cfg["bridge"].get("sysctl", {}) or {})
        for p in cfg["ports"]:
            for k, v in (p.get("sysctl") or {}).items():
                settings[port_sysctl_key(p["name"], k)] = v
        conntrack = {k: v for k, v in settings.items() if k.startswith(CONNTRACK_PREFIX)}
        before, after = _split_sysctls({k: v for k, v in settings.items() if k not in conntrack}, self.ports)
        host_bridge = _read_host({k for k in before if k.startswith("net.bridge.")})
        write_sysctls(self.dut_ns, before, self.ports)
        _ensure_host_unchanged(host_bridge)
        self.applied_sysctls = settings

        # The veth pairs are made inside the tester namespace with the DUT end born in the DUT namespace,
        # so no device ever appears in the namespace the recorder runs in. The tester end takes any frame
        # size, so only the DUT port's MTU decides what is too big.
        tester_cmds = []
        for p in cfg["ports"]:
            t = self.tester_ifname[p["name"]]
            tester_cmds.append(f"link add {t} mtu 65535 type veth peer name {p['name']} address {p['mac']} "
                               f"mtu {int(p.get('mtu', 1500))} netns {self.dut_ns}")
            tester_cmds.append(f"link set {t} arp off")
            tester_cmds.append(f"link set {t} up")
        ip_batch(self.tester_ns, tester_cmds)

        dut_cmds = ["link set lo up"]
        if cfg["device"] == "bridge":
            b = cfg["bridge"]
            extra = f" fdb_max_learned {int(b['fdb_max_learned'])}" if "fdb_max_learned" in b else ""
            # ageing_time is in clock_t, hundredths of a second.
            # Snooping with Linux's other multicast defaults (no querier, multicast_router 1, MLDv1 snooping)
            # when the scenario asks for it, off otherwise.
            snooping = 1 if b.get("multicast_snooping", False) else 0
            dut_cmds.append(f"link add br0 address {b['mac']} type bridge ageing_time "
                            f"{int(round(b.get('ageing_time_s', 300) * 100))} stp_state 0 "
                            f"mcast_snooping {snooping}{extra}")
            dut_cmds += [f"link set {p} master br0" for p in self.ports]
        else:
            for p in cfg["ports"]:
                dut_cmds += [f"address add {a} dev {p['name']}" for a in p.get("addresses", []) or []]
        ip_batch(self.dut_ns, dut_cmds)
        write_sysctls(self.dut_ns, after, self.ports)

        up = [f"link set {p} up" for p in self.ports]
        if cfg["device"] == "bridge":
            up.append("link set br0 up")
        else:
            r = cfg.get("router", {})
            # Routes and neighbours after the links are up: a gateway must be reachable when a route is added.
            # iproute2 takes the family from the destination, so IPv6 routes need no -6.
            up += [f"route add {rt}" for rt in r.get("routes", []) or []]
            up += [f"neigh replace {n['ip']} lladdr {n['mac']} dev {n['dev']} nud permanent"
                   for n in r.get("neighbors", []) or []]
        ip_batch(self.dut_ns, up)
        self._wait_ready()
        if uses_ipv6(cfg):
            self._wait_ipv6_ready()
        # Netfilter last: the ports, addresses and routes its rules name exist, and no step has run yet.
        if conntrack:
            self._set_conntrack_sysctls(conntrack)
        ruleset = (cfg.get(cfg["device"]) or {}).get("nftables")
        if ruleset:
            self._load_nftables(ruleset)

    def _enable_conntrack(self):
        """Makes the nf_conntrack_* sysctls appear in the DUT namespace: they exist only once the module is in."""
        key = "net.netfilter.nf_conntrack_max"
        if has_sysctl(self.dut_ns, key):
            return
        r = subprocess.run(["modprobe", "nf_conntrack"], capture_output=True, text=True) \
            if shutil.which("modprobe") else None
        if not has_sysctl(self.dut_ns, key):
            why = "no modprobe" if r is None else (r.stderr.strip() or f"modprobe exited {r.returncode}")
            raise KernelError("net.netfilter.nf_conntrack_* settings exist in a namespace only once connection "
                              "tracking is loaded, and this kernel has none (CONFIG_NF_CONNTRACK): "
                              f"modprobe nf_conntrack: {why}")

    def _set_conntrack_sysctls(self, settings):
        self._enable_conntrack()
        local, host = {}, {}
        for k, v in settings.items():
            path = _sysctl_path(k, ())
            with inside(self.dut_ns):
                writable = os.path.exists(path) and os.access(path, os.W_OK) and (os.stat(path).st_mode & 0o200)
            (host if k in HOST_GLOBAL_CONNTRACK and not writable else local)[k] = v
        if host:
            if os.environ.get(HOST_CONNTRACK_ENV) != "1":
                raise KernelError(f"{', '.join(host)}: read-only in a network namespace on this kernel (one table "
                                  "for the whole machine); to record this scenario the recorder must set them in "
                                  "the initial namespace for the length of the run, which limits every namespace "
                                  f"on the machine meanwhile: set {HOST_CONNTRACK_ENV}=1 to allow it")
            self._set_host_conntrack(host)
        write_sysctls(self.dut_ns, local)

    def _set_host_conntrack(self, settings):
        previous = _read_host(settings.keys())
        # Remembered before writing: delete() puts back whatever was changed, also after a failure half way.
        self.host_restore.update({k: v for k, v in previous.items() if k not in self.host_restore})
        for k, v in settings.items():
            try:
                with open(_sysctl_path(k, ()), "w") as f:
                    f.write(f"{v}\n")
            except OSError as e:
                raise KernelError(f"sysctl {k}={v} in the recorder's namespace: {e.strerror} (it must run in the "
                                  "initial network namespace)")

    def _load_nftables(self, ruleset):
        r = subprocess.run(["ip", "netns", "exec", self.dut_ns, "nft", "-f", "-"], input=ruleset,
                           capture_output=True, text=True)
        if r.returncode != 0:
            raise KernelError(f"nft -f (the scenario's nftables ruleset) in {self.dut_ns}: "
                              f"{r.stderr.strip() or f'exit {r.returncode}'}")

    def netfilter_state(self):
        """`nft list ruleset` (with counters) and `conntrack -L` of the DUT now, as {file name: text}. The
        conntrack table is listed in hash order, which is seeded at random: its lines are sorted."""
        out = {}
        r = subprocess.run(["ip", "netns", "exec", self.dut_ns, "nft", "list", "ruleset"],
                           capture_output=True, text=True)
        if r.returncode != 0:
            raise KernelError(f"nft list ruleset in {self.dut_ns}: {r.stderr.strip()}")
        out[NFT_LIST_FILE] = r.stdout
        r = subprocess.run(["ip", "netns", "exec", self.dut_ns, "conntrack", "-L"], capture_output=True, text=True)
        if r.returncode != 0:
            raise KernelError(f"conntrack -L in {self.dut_ns}: {r.stderr.strip()}")
        out[CONNTRACK_LIST_FILE] = "".join(sorted(r.stdout.splitlines(keepends=True)))
        return out

    def _links(self, netns):
        r = subprocess.run(["ip", "-n", netns, "-j", "-d", "link", "show"], capture_output=True, text=True)
        if r.returncode != 0:
            raise KernelError(f"ip -n {netns} link show: {r.stderr.strip()}")
        return {l["ifname"]: l for l in json.loads(r.stdout)}

    def _wait_ready(self, timeout_s=5.0):
        """Until every port has carrier (and, on a bridge, forwards): frames sent earlier would be lost."""
        deadline = time.monotonic() + timeout_s
        while True:
            links = self._links(self.dut_ns)
            waiting = []
            for p in self.ports:
                l = links.get(p, {})
                if l.get("operstate") != "UP":
                    waiting.append(f"{p} {l.get('operstate', 'missing')}")
                elif self.config["device"] == "bridge":
                    state = l.get("linkinfo", {}).get("info_slave_data", {}).get("state")
                    if state != "forwarding":
                        waiting.append(f"{p} bridge port {state}")
            if not waiting:
                return
            if time.monotonic() > deadline:
                raise KernelError("ports not ready after %.0f s: %s" % (timeout_s, ", ".join(waiting)))
            time.sleep(0.02)

    def _wait_ipv6_ready(self, timeout_s=5.0):
        """Until every port has its link-local address and no address is tentative, then IPV6_QUIET_S more:
        the MLD reports of link up are out before the capture opens, so none is recorded."""
        deadline = time.monotonic() + timeout_s
        while True:
            r = subprocess.run(["ip", "-n", self.dut_ns, "-j", "-6", "addr", "show"], capture_output=True, text=True)
            if r.returncode != 0:
                raise KernelError(f"ip -n {self.dut_ns} -6 addr show: {r.stderr.strip()}")
            by_port = {l["ifname"]: l.get("addr_info", []) for l in json.loads(r.stdout)}
            waiting = []
            for p in self.ports:
                infos = by_port.get(p, [])
                if not any(a.get("scope") == "link" for a in infos):
                    waiting.append(f"{p} has no link-local address")
                waiting += [f"{p} {a['local']} tentative" for a in infos if a.get("tentative")]
            if not waiting:
                break
            if time.monotonic() > deadline:
                raise KernelError("IPv6 not ready after %.0f s: %s" % (timeout_s, ", ".join(waiting)))
            time.sleep(0.02)
        time.sleep(IPV6_QUIET_S)

    def delete(self):
        """Deletes every namespace this DUT made (their veth pairs go with them); returns what failed."""
        left = []
        for name in reversed(self.created):
            r = subprocess.run(["ip", "netns", "del", name], capture_output=True, text=True)
            if r.returncode != 0 and os.path.exists(f"/run/netns/{name}"):
                left.append(f"{name}: {r.stderr.strip()}")
        self.created = []
        for k, v in self.host_restore.items():
            try:
                with open(_sysctl_path(k, ()), "w") as f:
                    f.write(v + "\n")
            except OSError as e:
                left.append(f"sysctl {k} not restored to {v}: {e.strerror}")
        self.host_restore = {}
        return left

    def kernel_release(self):
        return os.uname().release
