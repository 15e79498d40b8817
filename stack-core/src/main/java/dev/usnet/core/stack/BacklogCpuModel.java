package dev.usnet.core.stack;

import dev.usnet.core.buf.CowStats;
import dev.usnet.core.knob.Knobs;
import dev.usnet.core.stats.CpuAccount;
import dev.usnet.core.stats.Mib;
import dev.usnet.core.stats.MibCounters;
import dev.usnet.core.time.CpuMachine;
import dev.usnet.core.time.Napi;
import dev.usnet.core.time.Scheduler;

/**
 * The CPU model of a namespace's receive-backlog runs (usnet.cpu.model, docs/cpu-model.md): what a run's work
 * costs in modelled CPU time, from the counters it moved (frames, bridge and IPv4/IPv6 forwards, local deliveries,
 * copies, checksummed bytes), and, in virtual time, when the next run may start — after the cores this one kept
 * busy, on the namespace's own CPU or on a machine shared with others (usnet.cpu.machine). Namespace thread only.
 */
final class BacklogCpuModel {
    private final Knobs knobs;
    private final Scheduler scheduler;
    private final MibCounters mib;
    private final CowStats cow;
    private final CpuAccount cpu;
    // The namespace clock until which the last backlog run keeps its cores busy; the next run starts no earlier.
    private long busyUntil;
    // usnet.cpu.machine as last resolved: the shared machine (virtual time, model on) or null for our own.
    private String machineName = "";
    private CpuMachine machine;
    // The counters at the start of the current run (model on).
    private long fwd0;
    private long deliver0;
    private long cowCopies0;
    private long cowBytes0;
    private long bridge0;
    private long csum0;
    private long ctLookups0;
    private long ctCreates0;
    private long nat0;
    private long nftRules0;

    BacklogCpuModel(Knobs knobs, Scheduler scheduler, MibCounters mib, CowStats cow, CpuAccount cpu) {
        this.knobs = knobs;
        this.scheduler = scheduler;
        this.mib = mib;
        this.cow = cow;
        this.cpu = cpu;
    }

    /**
     * The machine whose CPU our backlog runs share with other namespaces (usnet.cpu.machine, with the CPU model on
     * in virtual time), or null when the namespace has its CPU to itself.
     */
    private CpuMachine sharedMachine() {
        String want = knobs.get(CpuModelSysctl.MACHINE);
        if (want.isEmpty() || knobs.get(CpuModelSysctl.MODEL) == 0) {
            return null;
        }
        if (!want.equals(machineName) || machine == null) {
            machineName = want;
            machine = scheduler.cpuMachine(want);
        }
        return machine;
    }

    /** Schedules the backlog run {@code run}: now, or after the modelled CPU is free again. */
    void schedule(Napi run) {
        if (knobs.get(CpuModelSysctl.MODEL) == 0) {
            // No CPU model (the default): the run is due now, and nothing else need be read on this per-frame path.
            scheduler.napiSchedule(run);
            return;
        }
        CpuMachine m = sharedMachine();
        if (m != null) {
            m.schedule(run);
            return;
        }
        long wait = busyUntil == 0 ? 0 : busyUntil - scheduler.nanoTime();
        if (wait > 0) {
            scheduler.executeAfter(run, wait);
        } else {
            scheduler.napiSchedule(run);
        }
    }

    /**
     * Datagrams forwarded, of both families: one forward costs the same (usnet.cpu.ip_fwd_ns) whether IPv4 or IPv6,
     * docs/cpu-model.md says where the two differ and why one knob serves.
     */
    private long forwarded() {
        return mib.get(Mib.IpForwDatagrams) + mib.get(Mib.Ip6OutForwDatagrams);
    }

    /** Datagrams delivered to a local protocol, of both families (usnet.cpu.local_deliver_ns each). */
    private long delivered() {
        return mib.get(Mib.IpInDelivers) + mib.get(Mib.Ip6InDelivers);
    }

    /** What the run's netfilter work costs: conntrack lookups and new entries, NAT rewrites, rules evaluated. */
    private long netfilterNanos() {
        return (cpu.conntrackLookups() - ctLookups0) * knobs.get(CpuModelSysctl.CT_LOOKUP_NS)
                + (cpu.conntrackCreates() - ctCreates0) * knobs.get(CpuModelSysctl.CT_NEW_NS)
                + (cpu.natRewrites() - nat0) * knobs.get(CpuModelSysctl.NAT_NS)
                + (cpu.nftRules() - nftRules0) * knobs.get(CpuModelSysctl.NFT_RULE_NS);
    }

    /** A backlog run starts: remembers the counters its work is measured by. False when the model is off. */
    boolean runStarts() {
        if (knobs.get(CpuModelSysctl.MODEL) == 0) {
            return false;
        }
        fwd0 = forwarded();
        deliver0 = delivered();
        cowCopies0 = cow.copies();
        cowBytes0 = cow.bytesCopied();
        bridge0 = cpu.bridgeForwards();
        csum0 = cpu.bytesChecksummed();
        ctLookups0 = cpu.conntrackLookups();
        ctCreates0 = cpu.conntrackCreates();
        nat0 = cpu.natRewrites();
        nftRules0 = cpu.nftRules();
        return true;
    }

    /** The run that {@link #runStarts} began handled {@code frames} frames: its modelled cost is charged. */
    void runEnds(int frames) {
        long picos = 1000L * (frames * knobs.get(CpuModelSysctl.L2_RX_NS)
                + (cpu.bridgeForwards() - bridge0) * knobs.get(CpuModelSysctl.BRIDGE_FWD_NS)
                + (forwarded() - fwd0) * knobs.get(CpuModelSysctl.IP_FWD_NS)
                + (delivered() - deliver0) * knobs.get(CpuModelSysctl.LOCAL_DELIVER_NS)
                + (cow.copies() - cowCopies0) * knobs.get(CpuModelSysctl.COW_COPY_NS)
                + netfilterNanos())
                + (cow.bytesCopied() - cowBytes0) * knobs.get(CpuModelSysctl.COPY_PS_PER_BYTE)
                + (cpu.bytesChecksummed() - csum0) * knobs.get(CpuModelSysctl.CSUM_PS_PER_BYTE);
        long busy = cpu.chargeModel(picos, (int) knobs.get(CpuModelSysctl.CORES));
        // Real time only accounts: the real CPU already takes its time, usnet never sleeps for the model.
        if (scheduler.isVirtual() && busy > 0) {
            CpuMachine m = sharedMachine();
            if (m != null) {
                m.charge(busy);
            } else {
                busyUntil = Math.max(busyUntil, scheduler.nanoTime()) + busy;
            }
        }
    }
}
