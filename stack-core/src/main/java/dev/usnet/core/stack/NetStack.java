package dev.usnet.core.stack;

import dev.usnet.core.bridge.BrNetfilter;
import dev.usnet.core.bridge.Bridge;
import dev.usnet.core.buf.CowStats;
import dev.usnet.core.buf.Packet;
import dev.usnet.core.conntrack.ConntrackCore;
import dev.usnet.core.device.Device;
import dev.usnet.core.device.Loopback;
import dev.usnet.core.event.NetListener;
import dev.usnet.core.ipv4.Arp;
import dev.usnet.core.ipv4.Devinet;
import dev.usnet.core.ipv4.Icmp;
import dev.usnet.core.ipv4.IpDefrag;
import dev.usnet.core.ipv4.IpForward;
import dev.usnet.core.ipv4.IpInput;
import dev.usnet.core.ipv4.IpOutput;
import dev.usnet.core.ipv4.Ipv4;
import dev.usnet.core.ipv4.Udp;
import dev.usnet.core.ipv6.Ipv6;
import dev.usnet.core.knob.DevConf;
import dev.usnet.core.knob.Knobs;
import dev.usnet.core.knob.NearestNames;
import dev.usnet.core.nat.NatCore;
import dev.usnet.core.nftables.Nftables;
import dev.usnet.core.neigh.NeighTable;
import dev.usnet.core.netns.NetCoreSysctl;
import dev.usnet.core.netns.Netns;
import dev.usnet.core.netns.PacketHandler;
import dev.usnet.core.netns.PacketTypes;
import dev.usnet.core.route.Fib4;
import dev.usnet.core.stats.CpuAccount;
import dev.usnet.core.stats.DropCounters;
import dev.usnet.core.stats.DropReason;
import dev.usnet.core.stats.LatencyPaths;
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
 * The network stack of one namespace (struct net), assembled: its devices, the receive backlog that feeds them,
 * the protocol table received frames are dispatched by, knobs and counters, and the protocol families brought
 * up in it (IPv4). Protocols and devices below see it only as a {@link Netns} or a
 * {@link dev.usnet.core.device.DeviceHost}. All packet processing for a namespace runs on its scheduler's thread.
 */
public final class NetStack implements Netns {
    private final ConntrackCore conntrack;
    private final NatCore nat;
    private final String name;
    private final long seed;
    private final Scheduler scheduler;
    private final SplittableRandom random;
    private final Knobs knobs = new Knobs();
    private final DropCounters drops = new DropCounters();
    private final MibCounters mib;
    private final CowStats cow = new CowStats();
    private final LatencyPaths latency = new LatencyPaths();
    private final Ipv4 ipv4;
    private final Ipv6 ipv6;
    // Made when the first bridge joins (guarded by this, as register is).
    private BrNetfilter brNetfilter;
    private final Loopback loopback;
    private volatile NetListener listener;
    private final Map<String, Device> byName = new LinkedHashMap<>();
    // Guarded by this (as byName): register/unregister change it in place, never copy it, so a bridge of ten
    // thousand ports is built in linear time. Lookups by ifindex are control-path only. A chained map, not
    // Netty's open-addressing IntObjectHashMap: ifindexes are consecutive, so there they form one long probe run
    // that every removal shifts back (deleting 100 000 ports took 16 s, mostly there).
    private final Map<Integer, Device> byIndex = new HashMap<>(4);
    private int nextIfindex = 1;
    private final EthernetFrame eth = new EthernetFrame();
    private final PacketTypes packetTypes = new PacketTypes();

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
    private final BacklogCpuModel cpuModel;

    public NetStack(String name, Scheduler scheduler, long seed) {
        this.name = name;
        this.seed = seed;
        this.scheduler = scheduler;
        this.singleThread = scheduler.isVirtual();
        this.mib = new MibCounters(singleThread);
        this.random = new SplittableRandom(seed ^ name.hashCode());
        this.cpu = new CpuAccount(scheduler.nanoTime());
        this.cpuModel = new BacklogCpuModel(knobs, scheduler, mib, cow, cpu);
        this.ipv4 = new Ipv4(this);
        this.ipv6 = new Ipv6(this);
        // Connection tracking and NAT are there from the start and cost nothing until a rule asks for them (the
        // modules hold no hooks, timers or random draws until then).
        this.conntrack = new ConntrackCore(ipv4);
        this.nat = new NatCore(ipv4, conntrack);
        ipv4.netfilter().install(conntrack, nat);
        this.loopback = new Loopback();
        register(loopback);
        loopback.setUp(true);
        ipv4.devinet().add(loopback, LOOPBACK_ADDRESS, 8);
    }

    public String name() {
        return name;
    }

    /** Who is told of link, FDB, neighbour and route changes here ({@code ip monitor}), or null: nobody is. */
    public NetListener listener() {
        return listener;
    }

    /** Starts ({@code l}) or stops (null) telling {@code l} of this namespace's changes. */
    public void setListener(NetListener l) {
        this.listener = l;
        ipv4.setListeners(l, l);
        // Neighbour discovery's entries are neighbours like ARP's (ip monitor neigh shows both families).
        ipv6.neigh().setListener(l);
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

    /** This namespace's IPv4 family. */
    public Ipv4 ipv4() {
        return ipv4;
    }

    /** This namespace's IPv6 family. */
    public Ipv6 ipv6() {
        return ipv6;
    }

    @Override
    public void netdevChanged(Device dev) {
        ipv6.linkChanged(dev);
        if (!dev.isUp()) {
            nat.deviceDown(dev);
        }
    }

    // The IPv4 family's parts, reached through the namespace by the many callers above stack-core (thin
    // delegations to ipv4(); inside stack-core the family's parts use their Ipv4 object).

    public Fib4 routes() {
        return ipv4.routes();
    }

    public Devinet devinet() {
        return ipv4.devinet();
    }

    public NeighTable neigh() {
        return ipv4.neigh();
    }

    public Arp arp() {
        return ipv4.arp();
    }

    public IpInput ipInput() {
        return ipv4.ipInput();
    }

    public IpForward ipForward() {
        return ipv4.ipForward();
    }

    public IpOutput ipOutput() {
        return ipv4.ipOutput();
    }

    public IpDefrag ipDefrag() {
        return ipv4.ipDefrag();
    }

    public Icmp icmp() {
        return ipv4.icmp();
    }

    public Udp udp() {
        return ipv4.udp();
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
        if (dev instanceof Bridge br) {
            // br_netfilter reaches this namespace's IPv4 hooks through the bridges registered here.
            if (brNetfilter == null) {
                brNetfilter = new BrNetfilter(ipv4);
            }
            br.setNetfilter(brNetfilter);
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
        Device master = dev.master();
        if (master != null) {
            master.releasePort(dev);
        }
        byIndex.remove(dev.ifindex());
        ipv4.deviceUnregistered(dev);
        ipv6.deviceUnregistered(dev);
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

    private void scheduleBacklogRun() {
        cpuModel.schedule(backlogTask);
    }

    private void processBacklog() {
        // Measured CPU: real time times every run; virtual time one in CpuAccount.VIRTUAL_SAMPLE, which stands for
        // them all (the clock reads were a few per cent of a simulated frame, and only the sum is ever reported).
        boolean timed = !singleThread || --runsUntilTimed <= 0;
        long t0 = timed ? System.nanoTime() : 0;
        boolean model = cpuModel.runStarts();
        // process_backlog's quota: net.core.dev_weight frames per run, then timers and other namespaces get a turn.
        int weight = (int) knobs.get(NetCoreSysctl.DEV_WEIGHT);
        int frames = 0;
        for (; frames < weight; frames++) {
            Packet p = pollBacklog();
            if (p == null) {
                break;
            }
            Device dev = p.dev();
            dev.napiReceive(p);
        }
        // napi_gro_flush at the end of the poll, charged to it: everything when the backlog is drained
        // (napi_complete_done), else only flows held since an earlier jiffy, as napi_poll does after a full weight.
        flushGro(backlogEmpty() ? -1 : jiffies());
        if (model) {
            cpuModel.runEnds(frames);
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
     * hands it to the protocol registered for its ethertype (__netif_receive_skb_core's ptype_base walk).
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
        PacketHandler handler = packetTypes.find(eth.outerType());
        if (handler == null) {
            drop(p, DropReason.UNHANDLED_PROTO);
            return;
        }
        p.setNetwork(start + EthernetFrame.HEADER_LEN);
        handler.rcv(p);
    }

    /**
     * dev_add_pack: frames of {@code ethertype} received here go to {@code handler}. A protocol family registers
     * its types when it joins the namespace; one handler per ethertype.
     */
    public void registerPacketType(int ethertype, PacketHandler handler) {
        packetTypes.register(ethertype, handler);
    }

    /** Counts the drop under its reason and frees the packet. */
    public void drop(Packet p, DropReason reason) {
        drops.count(reason);
        p.release();
    }

    /** Deletes every device (veth peers in other namespaces go with them) and cancels this namespace's work. */
    public void close() {
        // Transport protocols that keep state (TCP, in IPv4's protocol table) first: their connections hold packets
        // that must go back to the pool.
        for (int proto = 0; proto <= 255; proto++) {
            if (ipv4.ipInput().protocol(proto) instanceof AutoCloseable c) {
                try {
                    c.close();
                } catch (Exception e) {
                    throw new IllegalStateException("closing " + c + " (IP protocol " + proto + ") of namespace " + name, e);
                }
            }
        }
        for (Device d : devices()) {
            if (d != loopback) {
                d.delete();
            }
        }
        // The ruleset's registry entry would keep this namespace reachable after it is gone.
        Nftables rules = Nftables.existing(ipv4);
        if (rules != null) {
            rules.close();
        }
        conntrack.close();
        for (dev.usnet.core.device.Gro g = groPending; g != null; ) {
            dev.usnet.core.device.Gro next = g.nextPending();
            g.purge();
            g = next;
        }
        groPending = null;
        ipv4.close();
        ipv6.close();
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
