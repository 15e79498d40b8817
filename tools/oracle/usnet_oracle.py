#!/usr/bin/env python3
"""Records what the Linux kernel does with a scenario's frames, as a fixture that `usnet replay` reads.

  usnet_oracle.py record SCENARIO.py OUTDIR     from a scenario script (needs python3-scapy)
  usnet_oracle.py rerecord FIXTURE OUTDIR       the same DUT and input as an existing fixture, on this kernel

Both build the DUT as Linux in a fresh network namespace, send the frames into its ports at their times,
capture what leaves every port, wait out the run after the input, and write OUTDIR/scenario.json,
OUTDIR/in/<port>.pcap and OUTDIR/expected/<port>.pcap. A scenario with an nftables ruleset or conntrack
sysctls also gets OUTDIR/linux/nft-list-ruleset.txt and OUTDIR/linux/conntrack-L.txt, the DUT's rules
(with their counters) and connection tracking table at the end of the run. Needs root (CAP_NET_ADMIN and CAP_SYS_ADMIN).
Usually run through `usnet oracle record|check`; see docs/oracle.md.

Exit status: 0 recorded, 2 bad input or no privilege, 3 the kernel refused a step or the capture failed,
130 interrupted. The namespaces it made are deleted in every case but SIGKILL.
"""
import json
import os
import shutil
import signal
import sys
import tempfile

sys.dont_write_bytecode = True  # run from a source tree: leave no __pycache__ behind
import kernel_dut  # noqa: E402
import pcapfile  # noqa: E402
import port_taps  # noqa: E402
import scenario_input  # noqa: E402

EXIT_BAD_INPUT = 2
EXIT_KERNEL = 3
EXIT_INTERRUPTED = 130


class Interrupted(Exception):
    pass


def _on_signal(signum, _frame):
    raise Interrupted(signal.Signals(signum).name)


def _scenario_json(rec, dut):
    cfg = rec.config
    meta = dict(cfg)
    meta["linux"] = {
        "kernel": dut.kernel_release(),
        "sysctl": {k: v for k, v in dut.applied_sysctls.items()
                   if k in kernel_dut.ROUTER_BASELINE or k in kernel_dut.ROUTER_IPV6_BASELINE
                   or k in kernel_dut.BRIDGE_BASELINE
                   or k in kernel_dut.BRIDGE_NETFILTER_OFF or k in rec.linux_sysctl},
        "bridge": (f"stp_state 0, mcast_snooping {1 if (cfg.get('bridge') or {}).get('multicast_snooping') else 0}, "
                   "no vlan_filtering") if cfg["device"] == "bridge" else None,
    }
    meta["steps"] = rec.steps_summary
    return meta


def record(rec, outdir, in_source=None):
    """Runs the recording into a fresh directory next to OUTDIR, then puts it in place: a failed run never
    leaves half a fixture, nor destroys the one that was there."""
    parent = os.path.dirname(os.path.abspath(outdir))
    os.makedirs(parent, exist_ok=True)
    stage = tempfile.mkdtemp(prefix=".usnet-oracle-", dir=parent)
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(stage, 0o777 & ~umask)  # mkdtemp makes it private; a fixture is an ordinary directory
    dut = kernel_dut.KernelDut(rec.config, rec.linux_sysctl)
    taps = None
    try:
        dut.create()
        with kernel_dut.inside(dut.tester_ns):
            taps = port_taps.PortTaps(dut.tester_ifname)
        port_taps.run_schedule(taps, rec.injections, rec.tail_s)
        captured = taps.captured
        if kernel_dut.uses_netfilter(rec.config):
            os.makedirs(os.path.join(stage, "linux"))
            for fn, text in dut.netfilter_state().items():
                with open(os.path.join(stage, "linux", fn), "w") as f:
                    f.write(text)
        os.makedirs(os.path.join(stage, "in"))
        os.makedirs(os.path.join(stage, "expected"))
        if in_source:
            for fn in os.listdir(in_source):
                shutil.copy2(os.path.join(in_source, fn), os.path.join(stage, "in", fn))
        else:
            for port in rec.ports():
                pcapfile.write(os.path.join(stage, "in", f"{port}.pcap"),
                               [(rec.epoch + i.at_s, i.frame) for i in rec.injections if i.port == port])
        # Output keeps the time it left the DUT, on the inputs' clock: in/ and expected/ merge into one timeline.
        for port in rec.ports():
            pcapfile.write(os.path.join(stage, "expected", f"{port}.pcap"),
                           [(rec.epoch + t, f) for t, f in captured[port]])
        with open(os.path.join(stage, "scenario.json"), "w") as f:
            json.dump(_scenario_json(rec, dut), f, indent=2)
            f.write("\n")
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        raise
    finally:
        # Cleanup must not be cut short by a second signal (Ctrl-C twice, or SIGTERM from the usnet CLI).
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, signal.SIG_IGN)
        if taps:
            taps.close()  # before the namespaces go: an open socket would keep the tester namespace alive
        left = dut.delete()
        if left:
            print("usnet oracle: could not delete: " + "; ".join(left), file=sys.stderr)
    _put_in_place(stage, outdir)
    return dut.kernel_release()


def _put_in_place(stage, outdir):
    if os.path.isdir(outdir):
        for name in ("scenario.json", "in", "expected", "linux"):
            p = os.path.join(outdir, name)
            if os.path.isdir(p):
                shutil.rmtree(p)
            elif os.path.exists(p):
                os.remove(p)
            if os.path.exists(os.path.join(stage, name)):  # linux/ only for a netfilter scenario
                os.rename(os.path.join(stage, name), p)
        os.rmdir(stage)
    else:
        os.rename(stage, outdir)


def _check_outdir(outdir):
    """OUTDIR may be new, empty, or a fixture (whose scenario.json, in/, expected/ and linux/ are replaced); anything else is kept."""
    if not os.path.exists(outdir):
        return
    if not os.path.isdir(outdir):
        raise scenario_input.ScenarioError(f"{outdir}: exists and is not a directory")
    if os.listdir(outdir) and not os.path.isfile(os.path.join(outdir, "scenario.json")):
        raise scenario_input.ScenarioError(f"{outdir}: not empty and not a fixture directory; "
                                           "choose a new or empty directory")


def _usage():
    print("usage: usnet_oracle.py record SCENARIO.py OUTDIR | rerecord FIXTURE OUTDIR", file=sys.stderr)
    return EXIT_BAD_INPUT


def main(argv):
    if len(argv) != 3 or argv[0] not in ("record", "rerecord"):
        return _usage()
    mode, source, outdir = argv
    try:
        if mode == "record":
            rec = scenario_input.from_script(source)
            in_source = None
        else:
            rec = scenario_input.from_fixture(source)
            in_source = os.path.join(source, "in")
        if os.path.abspath(outdir) == os.path.abspath(source):
            raise scenario_input.ScenarioError(f"{outdir}: the output must not be the fixture read from")
        _check_outdir(outdir)
    except scenario_input.ScenarioError as e:
        print(f"usnet oracle: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    if os.geteuid() != 0:
        print("usnet oracle: recording builds the DUT in new kernel network namespaces, which needs "
              "CAP_NET_ADMIN and CAP_SYS_ADMIN: run as root (sudo)", file=sys.stderr)
        return EXIT_BAD_INPUT
    if kernel_dut.uses_netfilter(rec.config):
        missing = kernel_dut.netfilter_tools_missing()
        if missing:
            print(f"usnet oracle: this scenario loads nftables rules or conntrack settings into the DUT and lists "
                  f"them afterwards, which needs nft and conntrack: apt-get install {' '.join(missing)}",
                  file=sys.stderr)
            return EXIT_BAD_INPUT
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, _on_signal)
    name = rec.config.get("name", os.path.basename(os.path.abspath(outdir)))
    try:
        kernel = record(rec, outdir, in_source)
    except (KeyboardInterrupt, Interrupted) as e:
        print(f"usnet oracle: interrupted ({str(e) or 'SIGINT'}); the namespaces made were deleted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except (kernel_dut.KernelError, port_taps.CaptureError, OSError) as e:
        print(f"usnet oracle: recording {name} failed: {e}", file=sys.stderr)
        return EXIT_KERNEL
    print(f"recorded {name} on Linux {kernel} into {outdir}")
    for port in rec.ports():
        n_in = sum(1 for i in rec.injections if i.port == port)
        n_out = len(pcapfile.read(os.path.join(outdir, "expected", f"{port}.pcap")))
        print(f"  {port}: {n_in} frames in, {n_out} frames out")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
