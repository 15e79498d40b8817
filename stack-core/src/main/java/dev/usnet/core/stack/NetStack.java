package dev.usnet.core.stack;

import dev.usnet.core.buf.CowStats;
import dev.usnet.core.buf.Packet;
import dev.usnet.core.device.Device;
import dev.usnet.core.device.Loopback;
import dev.usnet.core.ipv4.Devinet;
import dev.usnet.core.ipv4.Icmp;
import dev.usnet.core.ipv4.IpDefrag;
import dev.usnet.core.ipv4.IpForward;
import dev.usnet.core.ipv4.IpInput;
import dev.usnet.core.ipv4.IpOutput;
import dev.usnet.core.ipv4.Udp;
import dev.usnet.core.knob.DevConf;
import dev.usnet.core.knob.Knobs;
import dev.usnet.core.knob.NearestNames;
import dev.usnet.core.neigh.Arp;
import dev.usnet.core.neigh.NeighTable;
import dev.usnet.core.route.RouteTable;
import dev.usnet.core.stats.CpuAccount;
import dev.usnet.core.stats.DropCounters;
import dev.usnet.core.stats.DropReason;
import dev.usnet.core.stats.LatencyPaths;
import dev.usnet.core.stats.Mib;
import dev.usnet.core.stats.MibCounters;
import dev.usnet.core.time.Napi;
import dev.usnet.core.time.Scheduler;
import dev.usnet.core.wire.EthernetFrame;
import dev.usnet.core.wire.Ipv4Addr;
import dev.usnet.core.wire.MacAddr;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * The network stack of one namespace (struct net): its devices, addresses, routes, neighbours, sockets,
 * knobs and counters, and the receive backlog that feeds them. All packet processing for a namespace runs
 * on its scheduler's thread.
 */
public final class NetStack {
    private final String name;
    private final long seed;
    private final Scheduler scheduler;
    private final SplittableRandom random;
    private final Knobs knobs = new Knobs();
    private final DropCounters drops = new DropCounters();
    private final MibCounters mib;
    private final CowStats cow = new CowStats();
    private final LatencyPaths latency = new LatencyPaths();
    private final RouteTable routes = new RouteTable();
    private final Devinet devinet = new Devinet(routes);
    private final NeighTable neigh;
    private final Arp arp;
    private final IpInput ipInput;
    private final IpForward ipForward;
    private final IpOutput ipOutput;
    private final IpDefrag ipDefrag;
    private final Icmp icmp;
    private final Udp udp;
    private final Loopback loopback;
    private volatile NetListener listener;
    private final Map<Class<?>, Object> services = new java.util.concurrent.ConcurrentHashMap<>();
    private final Map<String, Device> byName = new LinkedHashMap<>();
    // Guarded by this (as byName): register/unregister change it in place, never copy it, so a bridge of ten
    // thousand ports is built in linear time. Lookups by ifindex are control-path only. A chained map, not
    // Netty's open-addressing IntObjectHashMap: ifindexes are consecutive, so there they form one long probe run
    // that every removal shifts back (deleting 100 000 ports took 16 s, mostly there).
    private final Map<Integer, Device> byIndex = new HashMap<>(4);
    private int nextIfindex = 1;
    private final EthernetFrame eth = new EthernetFrame();

    private static final int LOOPBACK_ADDRESS = Ipv4Addr.parse("127.0.0.1");

    /** The largest receive backlog net.core.netdev_max_backlog may set. */
    public static final int BACKLOG_CAPACITY = 65_536;

    // The receive backlog (the sk_buff_head netif_rx queues onto), linked through the packets themselves, so it
    // costs nothing while empty and never grows or allocates: any thread pushes onto `incoming` (a lock-free
    // stack, newest first); the namespace thread takes it whole, turns it into arrival order in `head` and
    // processes from there. Its length is counted apart for net.core.netdev_max_backlog.
    @SuppressWarnings("unused")
    private volatile Packet incoming;
    private Packet head;
    // Virtual time runs every namespace on one thread: frames join `head` in arrival order directly, ending at
    // `tail`, and the length and scheduled flag take plain stores; the atomic path above cost a locked
    // instruction or fence at each of five steps per frame.
    private final boolean singleThread;
    private Packet tail;
    @SuppressWarnings("unused")
    private volatile int backlogLen;
    // NAPI_STATE_SCHED: a backlog run is scheduled or running.
    @SuppressWarnings("unused")
    private volatile boolean backlogScheduled;
    private final Napi backlogTask = new Napi() {
        @Override
        public void run() {
            processBacklog();
        }

        @Override
        public String toString() {
            return "receive backlog of netns " + name;
        }
    };
    private static final VarHandle INCOMING;
    private static final VarHandle BACKLOG_LEN;
    private static final VarHandle BACKLOG_SCHEDULED;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            INCOMING = l.findVarHandle(NetStack.class, "incoming", Packet.class);
            BACKLOG_LEN = l.findVarHandle(NetStack.class, "backlogLen", int.class);
            BACKLOG_SCHEDULED = l.findVarHandle(NetStack.class, "backlogScheduled", boolean.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }
    private final CpuAccount cpu;
    // With the CPU model on in virtual time: the namespace clock until which the last backlog run keeps its
    // cores busy; the next run starts no earlier. Only touched on the namespace thread (virtual time).
    private long cpuBusyUntil;
    // usnet.cpu.machine as last resolved: the shared machine (virtual time, model on) or null for our own.
    private String machineName = "";
    private dev.usnet.core.time.CpuMachine machine;

    public NetStack(String name, Scheduler scheduler, long seed) {
        this.name = name;
        this.seed = seed;
        this.scheduler = scheduler;
        this.singleThread = scheduler.isVirtual();
        this.mib = new MibCounters(singleThread);
        this.random = new SplittableRandom(seed ^ name.hashCode());
        this.cpu = new CpuAccount(scheduler.nanoTime());
        this.neigh = new NeighTable(this);
        this.arp = new Arp(this);
        this.icmp = new Icmp(this);
        this.ipOutput = new IpOutput(this);
        this.ipForward = new IpForward(this);
        this.ipDefrag = new IpDefrag(this);
        this.udp = new Udp(this);
        this.ipInput = new IpInput(this);
        this.loopback = new Loopback();
        register(loopback);
        loopback.setUp(true);
        devinet.add(loopback, LOOPBACK_ADDRESS, 8);
    }

    public String name() {
        return name;
    }

    /**
     * A per-namespace service installed by a module above stack-core (TCP installs itself here, as a
     * protocol registers in struct net), or null.
     */
    public <T> T service(Class<T> type) {
        return type.cast(services.get(type));
    }

    /** Installs a service; fails when one of that type is already installed. */
    public <T> void installService(Class<T> type, T service) {
        if (services.putIfAbsent(type, service) != null) {
            throw new IllegalStateException(type.getSimpleName() + " already installed in namespace " + name);
        }
    }

    /** Who is told of link, FDB, neighbour and route changes here ({@code ip monitor}), or null: nobody is. */
    public NetListener listener() {
        return listener;
    }

    /** Starts ({@code l}) or stops (null) telling {@code l} of this namespace's changes. */
    public void setListener(NetListener l) {
        this.listener = l;
        routes.setListener(l);
    }

    /** The seed this namespace was created with (its random source mixes in the name). */
    public long seed() {
        return seed;
    }

    public Scheduler scheduler() {
        return scheduler;
    }

    /** A timer of this namespace: runs {@code task} after {@code delayNanos}, its run time measured into {@link #cpu()}. */
    public dev.usnet.core.time.Timeout schedule(Runnable task, long delayNanos) {
        return scheduler.schedule(task, delayNanos, cpu);
    }

    public long now() {
        return scheduler.nanoTime();
    }

    /**
     * Milliseconds since midnight UTC, as IP timestamp options carry (inet_current_timestamp): wall clock in
     * real time, the virtual clock in virtual time.
     */
    public long msSinceMidnight() {
        long ms = scheduler.isVirtual() ? scheduler.nanoTime() / 1_000_000L : System.currentTimeMillis();
        return ms % 86_400_000L;
    }

    /** Now in jiffies of usnet.hz, for the limits Linux counts in jiffies. */
    public long jiffies() {
        return scheduler.nanoTime() / (1_000_000_000L / knobs.get(NetCoreSysctl.HZ));
    }

    /** This namespace's seeded random source (deterministic in virtual time). Use on its thread only. */
    public SplittableRandom random() {
        return random;
    }

    public Knobs knobs() {
        return knobs;
    }

    public DevConf conf(Device dev) {
        DevConf c = dev.conf();
        return c != null ? c : knobs.dev(dev.name());
    }

    public DropCounters drops() {
        return drops;
    }

    public MibCounters mib() {
        return mib;
    }

    public CowStats cow() {
        return cow;
    }

    /** This namespace's CPU: measured on its thread and modelled (usnet.cpu.model), docs/cpu-model.md. */
    public CpuAccount cpu() {
        return cpu;
    }

    public LatencyPaths latency() {
        return latency;
    }

    public RouteTable routes() {
        return routes;
    }

    public Devinet devinet() {
        return devinet;
    }

    public NeighTable neigh() {
        return neigh;
    }

    public Arp arp() {
        return arp;
    }

    public IpInput ipInput() {
        return ipInput;
    }

    public IpForward ipForward() {
        return ipForward;
    }

    public IpOutput ipOutput() {
        return ipOutput;
    }

    public IpDefrag ipDefrag() {
        return ipDefrag;
    }

    public Icmp icmp() {
        return icmp;
    }

    public Udp udp() {
        return udp;
    }

    public Loopback loopback() {
        return loopback;
    }

    // ---- devices ----

    /** A device joins this namespace and gets the next ifindex here (register_netdevice). */
    public synchronized void register(Device dev) {
        if (byName.containsKey(dev.name())) {
            throw new IllegalArgumentException("device " + dev.name() + " already exists in namespace " + name);
        }
        dev.attach(this, nextIfindex++);
        byName.put(dev.name(), dev);
        byIndex.put(dev.ifindex(), dev);
        knobs.dev(dev.name());
    }

    /**
     * A device leaves this namespace (deleted, or moving to another): its addresses, routes, neighbours and
     * settings here are flushed, as Linux does.
     */
    public synchronized void unregister(Device dev) {
        if (byName.get(dev.name()) != dev) {
            return;
        }
        byName.remove(dev.name());
        if (dev.master() instanceof dev.usnet.core.bridge.Bridge br) {
            br.removePort(dev);
        }
        byIndex.remove(dev.ifindex());
        devinet.flush(dev);
        routes.removeDevice(dev);
        neigh.flushDevice(dev);
        knobs.forgetDevice(dev.name());
        dev.attach(null, 0);
    }

    public synchronized Device device(String devName) {
        return byName.get(devName);
    }

    public synchronized Device device(int ifindex) {
        return byIndex.get(ifindex);
    }

    /** The device or a clear error naming what exists. */
    public synchronized Device requireDevice(String devName) {
        Device d = byName.get(devName);
        if (d == null) {
            throw new IllegalArgumentException("no device '" + devName + "' in namespace " + name + " (have: "
                    + NearestNames.listing(devName, byName.keySet()) + ")");
        }
        return d;
    }

    /** How many devices the namespace has (lo included), without copying the list. */
    public synchronized int deviceCount() {
        return byName.size();
    }

    public synchronized List<Device> devices() {
        return new ArrayList<>(byName.values());
    }

    // ---- packet entry points ----

    /**
     * netif_rx: queues a frame received by {@code dev} for processing on this namespace's thread. Callable
     * from any thread (a veth peer in another namespace, an I/O thread).
     */
    public void netifRx(Device dev, Packet p) {
        if (backlogLen >= knobs.get(NetCoreSysctl.NETDEV_MAX_BACKLOG)) {
            dev.stats().rxDrop();
            drop(p, DropReason.BACKLOG_FULL);
            return;
        }
        p.setDev(dev);
        p.setFlooded(false);
        if (singleThread) {
            BACKLOG_LEN.set(this, backlogLen + 1);
            if (tail == null) {
                head = p;
            } else {
                tail.setNext(p);
            }
            tail = p;
            if (!backlogScheduled) {
                BACKLOG_SCHEDULED.set(this, true);
                scheduleBacklogRun();
            }
            return;
        }
        BACKLOG_LEN.getAndAdd(this, 1);
        Packet top;
        do {
            top = (Packet) INCOMING.getVolatile(this);
            p.setNext(top);
        } while (!INCOMING.compareAndSet(this, top, p));
        if (!backlogScheduled && BACKLOG_SCHEDULED.compareAndSet(this, false, true)) {
            scheduleBacklogRun();
        }
    }

    /** The next frame of the receive backlog in arrival order, or null. Namespace thread only. */
    private Packet pollBacklog() {
        Packet p = head;
        if (singleThread) {
            if (p == null) {
                return null;
            }
            head = p.next();
            if (head == null) {
                tail = null;
            }
            p.setNext(null);
            BACKLOG_LEN.set(this, backlogLen - 1);
            return p;
        }
        if (p == null) {
            Packet n = (Packet) INCOMING.getAndSet(this, (Packet) null);
            while (n != null) {
                Packet next = n.next();
                n.setNext(p);
                p = n;
                n = next;
            }
            if (p == null) {
                return null;
            }
        }
        head = p.next();
        p.setNext(null);
        BACKLOG_LEN.getAndAdd(this, -1);
        return p;
    }

    private boolean backlogEmpty() {
        return head == null && incoming == null;
    }

    /** Frames waiting in the receive backlog. */
    public int backlogLength() {
        return backlogLen;
    }

    /**
     * The machine whose CPU our backlog runs share with other namespaces (usnet.cpu.machine, with the CPU model on
     * in virtual time), or null when the namespace has its CPU to itself.
     */
    private dev.usnet.core.time.CpuMachine sharedMachine() {
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

    private void scheduleBacklogRun() {
        if (knobs.get(CpuModelSysctl.MODEL) == 0) {
            // No CPU model (the default): the run is due now, and nothing else need be read on this per-frame path.
            scheduler.napiSchedule(backlogTask);
            return;
        }
        dev.usnet.core.time.CpuMachine m = sharedMachine();
        if (m != null) {
            m.schedule(backlogTask);
            return;
        }
        long wait = cpuBusyUntil == 0 ? 0 : cpuBusyUntil - scheduler.nanoTime();
        if (wait > 0) {
            scheduler.executeAfter(backlogTask, wait);
        } else {
            scheduler.napiSchedule(backlogTask);
        }
    }

    private void processBacklog() {
        // Measured CPU: real time times every run; virtual time one in CpuAccount.VIRTUAL_SAMPLE, which stands for
        // them all (the clock reads were a few per cent of a simulated frame, and only the sum is ever reported).
        boolean timed = !singleThread || --runsUntilTimed <= 0;
        long t0 = timed ? System.nanoTime() : 0;
        boolean model = knobs.get(CpuModelSysctl.MODEL) != 0;
        long fwd0 = 0;
        long deliver0 = 0;
        long cowCopies0 = 0;
        long cowBytes0 = 0;
        long bridge0 = 0;
        long csum0 = 0;
        if (model) {
            fwd0 = mib.get(Mib.IpForwDatagrams);
            deliver0 = mib.get(Mib.IpInDelivers);
            cowCopies0 = cow.copies();
            cowBytes0 = cow.bytesCopied();
            bridge0 = cpu.bridgeForwards();
            csum0 = cpu.bytesChecksummed();
        }
        // process_backlog's quota: net.core.dev_weight frames per run, then timers and other namespaces get a turn.
        int weight = (int) knobs.get(NetCoreSysctl.DEV_WEIGHT);
        int frames = 0;
        for (; frames < weight; frames++) {
            Packet p = pollBacklog();
            if (p == null) {
                break;
            }
            p.dev().napiReceive(p);
        }
        // napi_gro_flush at the end of the poll, charged to it: everything when the backlog is drained
        // (napi_complete_done), else only flows held since an earlier jiffy, as napi_poll does after a full weight.
        flushGro(backlogEmpty() ? -1 : jiffies());
        if (model) {
            long picos = 1000L * (frames * knobs.get(CpuModelSysctl.L2_RX_NS)
                    + (cpu.bridgeForwards() - bridge0) * knobs.get(CpuModelSysctl.BRIDGE_FWD_NS)
                    + (mib.get(Mib.IpForwDatagrams) - fwd0) * knobs.get(CpuModelSysctl.IP_FWD_NS)
                    + (mib.get(Mib.IpInDelivers) - deliver0) * knobs.get(CpuModelSysctl.LOCAL_DELIVER_NS)
                    + (cow.copies() - cowCopies0) * knobs.get(CpuModelSysctl.COW_COPY_NS))
                    + (cow.bytesCopied() - cowBytes0) * knobs.get(CpuModelSysctl.COPY_PS_PER_BYTE)
                    + (cpu.bytesChecksummed() - csum0) * knobs.get(CpuModelSysctl.CSUM_PS_PER_BYTE);
            long busy = cpu.chargeModel(picos, (int) knobs.get(CpuModelSysctl.CORES));
            // Real time only accounts: the real CPU already takes its time, usnet never sleeps for the model.
            if (scheduler.isVirtual() && busy > 0) {
                dev.usnet.core.time.CpuMachine m = sharedMachine();
                if (m != null) {
                    m.charge(busy);
                } else {
                    cpuBusyUntil = Math.max(cpuBusyUntil, scheduler.nanoTime()) + busy;
                }
            }
        }
        if (timed) {
            int standsFor = singleThread ? CpuAccount.VIRTUAL_SAMPLE : 1;
            cpu.addMeasured(System.nanoTime() - t0, standsFor);
            runsUntilTimed = standsFor;
        } else {
            cpu.ran();
        }
        scheduler.ranFrames(frames);
        if (!backlogEmpty()) {
            scheduleBacklogRun();
            return;
        }
        if (singleThread) {
            BACKLOG_SCHEDULED.set(this, false);
            return;
        }
        BACKLOG_SCHEDULED.setVolatile(this, false);
        // A frame queued between the check and the reset saw the run scheduled and did not schedule one.
        if (!backlogEmpty() && BACKLOG_SCHEDULED.compareAndSet(this, false, true)) {
            scheduleBacklogRun();
        }
    }

    // Backlog runs to go until the next timed one (virtual time).
    private int runsUntilTimed;

    // Devices whose GRO holds packets in the current backlog run (a list through Gro.nextPending), or null.
    private dev.usnet.core.device.Gro groPending;

    /** GRO of a device here started holding packets in this backlog run: it is flushed at the run's end. */
    public void groPending(dev.usnet.core.device.Gro g) {
        g.setNextPending(groPending);
        groPending = g;
    }

    private void flushGro(long onlyBefore) {
        dev.usnet.core.device.Gro g = groPending;
        groPending = null;
        dev.usnet.core.device.Gro keep = null;
        while (g != null) {
            dev.usnet.core.device.Gro next = g.nextPending();
            if (g.flush(onlyBefore)) {
                // Still holding: stays on the list for a later run.
                g.setNextPending(keep);
                keep = g;
            }
            g = next;
        }
        groPending = keep;
    }

    /**
     * The protocol demux after a device (and any bridge) had the frame: classifies it like eth_type_trans and
     * hands it to ARP or IPv4.
     */
    public void l2Receive(Packet p) {
        int start = p.start();
        if (eth.check(p.buf(), start, p.length()) != null) {
            drop(p, DropReason.PKT_TOO_SMALL);
            return;
        }
        long dst = eth.dst();
        Device dev = p.dev();
        if (dst == dev.mac()) {
            p.setPktType(Packet.PACKET_HOST);
        } else if (MacAddr.isBroadcast(dst)) {
            p.setPktType(Packet.PACKET_BROADCAST);
        } else if (MacAddr.isMulticast(dst)) {
            p.setPktType(Packet.PACKET_MULTICAST);
        } else {
            p.setPktType(Packet.PACKET_OTHERHOST);
        }
        switch (eth.outerType()) {
            case EthernetFrame.ETH_P_IP -> {
                p.setNetwork(start + EthernetFrame.HEADER_LEN);
                ipInput.rcv(p);
            }
            case EthernetFrame.ETH_P_ARP -> {
                p.setNetwork(start + EthernetFrame.HEADER_LEN);
                arp.rcv(p);
            }
            default -> drop(p, DropReason.UNHANDLED_PROTO);
        }
    }

    /** Counts the drop under its reason and frees the packet. */
    public void drop(Packet p, DropReason reason) {
        drops.count(reason);
        p.release();
    }

    /** Deletes every device (veth peers in other namespaces go with them) and cancels this namespace's work. */
    public void close() {
        // Services (TCP) first: their connections hold packets that must go back to the pool.
        for (Object svc : services.values()) {
            if (svc instanceof AutoCloseable c) {
                try {
                    c.close();
                } catch (Exception e) {
                    throw new IllegalStateException("closing " + svc + " of namespace " + name, e);
                }
            }
        }
        for (Device d : devices()) {
            if (d != loopback) {
                d.delete();
            }
        }
        for (dev.usnet.core.device.Gro g = groPending; g != null; ) {
            dev.usnet.core.device.Gro next = g.nextPending();
            g.purge();
            g = next;
        }
        groPending = null;
        neigh.close();
        ipDefrag.close();
        arp.close();
        Packet p;
        while ((p = pollBacklog()) != null) {
            p.release();
        }
    }

    @Override
    public String toString() {
        return "netns " + name;
    }

    /** A random integer in [0, bound) from this namespace's seeded source. */
    public long randomBelow(long bound) {
        return bound <= 0 ? 0 : random.nextLong(bound);
    }
}
