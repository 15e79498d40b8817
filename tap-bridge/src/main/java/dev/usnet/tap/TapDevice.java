package dev.usnet.tap;

import dev.usnet.core.buf.Buffers;
import dev.usnet.core.buf.Packet;
import dev.usnet.core.device.Device;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.stats.DropReason;
import dev.usnet.tap.sys.Errno;
import dev.usnet.core.wire.EthernetFrame;
import io.netty.buffer.ByteBuf;
import io.netty.channel.IoEvent;
import io.netty.channel.IoEventLoop;
import io.netty.channel.IoRegistration;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoEvent;
import io.netty.channel.epoll.EpollIoHandle;
import io.netty.channel.epoll.EpollIoOps;
import io.netty.channel.unix.Errors;
import io.netty.channel.unix.FileDescriptor;
import io.netty.channel.unix.IovArray;
import io.netty.util.concurrent.Future;
import io.netty.util.internal.PlatformDependent;
import java.io.IOException;
import java.nio.channels.ClosedChannelException;
import java.util.Queue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A usnet device whose wire is a kernel TAP device (the guest side of a VM's tap NIC): what the kernel sends on
 * the TAP arrives here, what usnet transmits here the kernel receives. The fd is served by Netty's epoll
 * {@code IoHandle} API on one {@link IoEventLoop}: on readiness up to {@value #READ_BATCH} frames are read into
 * pooled direct buffers and queued to the owning namespace ({@link NetStack#netifRx}).
 *
 * <p>Every use of the fd — reads, writes, close — happens on that event loop, so a closed fd number can never
 * be reused under a write. {@link #xmit} writes at once when the namespace runs on the same loop (the fast
 * path: register the TAP on the namespace's own loop); from another thread it hands the packet over through a
 * bounded lock-free queue drained on the TAP's loop, with no allocation per frame.
 *
 * <p>With IFF_VNET_HDR every frame carries a virtio_net_hdr: on read it becomes the packet's GSO type and size
 * and a partial checksum; on write it is built from them, so 64 KiB TCP super-frames pass through unsegmented.
 *
 * <p>When the kernel side disappears (its namespace deleted: EPOLLERR, reads fail with EBADFD) the device logs
 * it once, counts it, stops reading, closes the fd and goes down; the event loop carries on.
 */
public final class TapDevice extends Device {
    private static final Logger LOG = LoggerFactory.getLogger(TapDevice.class);

    /** Frames read per readiness event (NAPI-like budget; measured +28 % over one per wake-up). */
    public static final int READ_BATCH = 64;
    /** Frames the cross-thread hand-over queue holds (a TAP's default txqueuelen is 1000). */
    public static final int TX_QUEUE_CAPACITY = 1024;
    /** Frames written per hand-over task before other work on the loop gets a turn. */
    private static final int TX_BUDGET = 256;
    /** Largest frame the kernel hands over with TSO on: 64 KiB of IP plus Ethernet and one VLAN tag. */
    static final int GSO_MAX_FRAME = 65_536 + EthernetFrame.HEADER_LEN + EthernetFrame.VLAN_TAG_LEN;

    private static final int IOV_ENTRIES = 16;
    private static final int EPOLLIN = EpollIoOps.EPOLLIN.value();
    private static final int EPOLLERR = EpollIoOps.EPOLLERR.value();
    private static final int EPOLLHUP = 0x10;

    private final Tun tun;
    private final IoEventLoop loop;
    private final TunFd fd;
    private final Handle handle = new Handle();
    private final int vnetLen;
    private final boolean gsoRx;
    private final TapStats tapStats = new TapStats();
    private final Queue<Packet> txQueue = PlatformDependent.newFixedMpscQueue(TX_QUEUE_CAPACITY);
    private final AtomicBoolean txScheduled = new AtomicBoolean();
    private final Runnable txDrain = this::drainTx;
    private final AtomicBoolean closed = new AtomicBoolean();
    private final AtomicBoolean gsoDropLogged = new AtomicBoolean();

    // Confined to the event loop.
    private IoRegistration registration;
    private ByteBuf spare;
    private ByteBuf scratch;
    private final ByteBuf vnetOut;
    private final IovArray iov;

    private volatile boolean gone;
    /** The kernel side was told it has no carrier (TUNSETCARRIER 0). */
    private volatile boolean carrierOff;
    /** Being deleted: going down now is the fd closing, not a carrier change. */
    private volatile boolean closing;
    private volatile String goneReason;

    /**
     * Wraps the open TAP {@code tun} as device {@code name} with MAC {@code mac}, registered on {@code loop} (an
     * epoll {@link IoEventLoop}) and reading. The device joins no namespace yet: {@link NetStack#register} it (or
     * use {@link #create}), then set it up. Owns {@code tun} from here: deleting the device closes it.
     */
    public TapDevice(String name, long mac, Tun tun, IoEventLoop loop) {
        super("tap", name, mac);
        Epoll.ensureAvailability();
        if (!loop.isCompatible(Handle.class)) {
            tun.close();
            throw new IllegalArgumentException("event loop " + loop + " is not an epoll IoEventLoop"
                    + " (use MultiThreadIoEventLoopGroup with EpollIoHandler.newFactory())");
        }
        this.tun = tun;
        this.loop = loop;
        this.fd = new TunFd(tun);
        this.vnetLen = tun.vnetHdr() ? VirtioNetHdr.LEN : 0;
        this.gsoRx = (tun.offloads() & (Tun.TUN_F_TSO4 | Tun.TUN_F_TSO6 | Tun.TUN_F_TSO_ECN)) != 0;
        // With the virtio-net header, the kernel takes partial checksums and super-frames from us.
        setTxChecksumOffload(vnetLen > 0);
        setGsoOffload(vnetLen > 0);
        this.vnetOut = Buffers.alloc().directBuffer(VirtioNetHdr.LEN, VirtioNetHdr.LEN);
        // IovArray(n) sizes its memory for n entries but still allows IOV_MAX adds: cap it to what it holds.
        this.iov = new IovArray(IOV_ENTRIES);
        this.iov.maxCount(IOV_ENTRIES);
        register();
    }

    /** Wraps {@code tun} as a device named like the kernel's, registered in {@code stack} (still down). */
    public static TapDevice create(NetStack stack, Tun tun, IoEventLoop loop, long mac) {
        TapDevice d = new TapDevice(tun.name(), mac, tun, loop);
        try {
            stack.register(d);
        } catch (RuntimeException e) {
            d.destroy();
            throw e;
        }
        return d;
    }

    /** Opens a TAP as {@code o} says and wraps it: {@code create(stack, Tun.open(o), loop, mac)}. */
    public static TapDevice open(NetStack stack, Tun.Options o, IoEventLoop loop, long mac) throws TunException {
        return create(stack, Tun.open(o), loop, mac);
    }

    public Tun tun() {
        return tun;
    }

    public IoEventLoop eventLoop() {
        return loop;
    }

    public TapStats tapStats() {
        return tapStats;
    }

    /** True once the kernel side disappeared. */
    public boolean isGone() {
        return gone;
    }

    /** Why the kernel side disappeared ("EPOLLERR, read: EBADFD", ...), or null. */
    public String goneReason() {
        return goneReason;
    }

    @Override
    public boolean hasCarrier() {
        return isUp() && !gone && !closed.get();
    }

    /**
     * Up or down on usnet's side is carrier on the kernel's (TUNSETCARRIER): {@code ip link} there shows
     * NO-CARRIER while this end is down, as for a pulled cable, and the kernel stops sending into it.
     */
    @Override
    public void setUp(boolean up) {
        super.setUp(up);
        // Only a change the kernel side does not already see: a fresh TAP has carrier, and one being closed or gone
        // takes its carrier with its fd.
        if (up == carrierOff && !gone && !closing && !closed.get()) {
            try {
                tun.setCarrier(up);
                carrierOff = !up;
            } catch (TunException e) {
                LOG.warn("tap {}: {}", name(), e.getMessage());
            }
        }
    }

    private void register() {
        Future<IoRegistration> f = loop.register(handle);
        if (!loop.inEventLoop()) {
            if (!f.awaitUninterruptibly(10, TimeUnit.SECONDS)) {
                closeAfterFailedRegistration();
                throw new IllegalStateException("tap " + name() + ": event loop did not register the fd in 10 s");
            }
        }
        if (f.isDone()) {
            registered(f);
        } else {
            f.addListener(x -> registered(f));
        }
    }

    private void registered(Future<IoRegistration> f) {
        if (!f.isSuccess()) {
            closeAfterFailedRegistration();
            throw new IllegalStateException("tap " + name() + ": cannot register fd on " + loop, f.cause());
        }
        IoRegistration r = f.getNow();
        if (loop.inEventLoop()) {
            arm(r);
        } else {
            loop.submit(() -> arm(r)).awaitUninterruptibly(10, TimeUnit.SECONDS);
        }
    }

    private void arm(IoRegistration r) {
        registration = r;
        if (closed.get()) {
            r.cancel();
            return;
        }
        r.submit(EpollIoOps.EPOLLIN);
    }

    private void closeAfterFailedRegistration() {
        closed.set(true);
        tun.close();
        releaseBuffers();
    }

    // ---- receive: kernel -> usnet, on the TAP's loop ----

    private void readReady(int ops) {
        tapStats.readWakeups++;
        for (int i = 0; i < READ_BATCH && !gone && !closed.get(); i++) {
            if (!readOne()) {
                break;
            }
        }
        if ((ops & (EPOLLERR | EPOLLHUP)) != 0 && !gone && !closed.get()) {
            deviceGone((ops & EPOLLERR) != 0 ? "EPOLLERR" : "EPOLLHUP");
        }
    }

    /** Reads one frame; false when there is nothing more to read now. */
    @SuppressWarnings("NonAtomicOperationOnVolatileField")
    private boolean readOne() {
        int frameCap = gsoRx ? GSO_MAX_FRAME : mtu() + EthernetFrame.HEADER_LEN + EthernetFrame.VLAN_TAG_LEN;
        int headroom = Buffers.HEADROOM;
        ByteBuf b = spare;
        spare = null;
        if (b == null || b.capacity() < headroom + frameCap) {
            if (b != null) {
                b.release();
            }
            b = Buffers.alloc().directBuffer(headroom + frameCap);
        }
        int pos = headroom - vnetLen;
        int limit = headroom + frameCap;
        int n;
        try {
            n = fd.readAddress(b.memoryAddress(), pos, limit);
        } catch (IOException e) {
            spare = b;
            readFailed(e);
            return false;
        }
        if (n == 0) {
            spare = b;
            return false;
        }
        if (n < 0) {
            spare = b;
            deviceGone("read: end of file");
            return false;
        }
        if (pos + n == limit) {
            tapStats.rxMaybeTruncated++;
        }
        int frameLen = n - vnetLen;
        if (frameLen < EthernetFrame.HEADER_LEN) {
            tapStats.rxDropped++;
            spare = b;
            return true;
        }
        NetStack s = isUp() ? stack() : null;
        if (s == null) {
            tapStats.rxDropped++;
            spare = b;
            return true;
        }
        b.setIndex(headroom, headroom + frameLen);
        Packet p = Packet.wrap(b);
        if (vnetLen > 0 && !VirtioNetHdr.apply(b, pos, p, headroom, frameLen)) {
            tapStats.rxDropped++;
            p.release();
            return true;
        }
        tapStats.rx(frameLen, p.gsoSize());
        s.netifRx(this, p);
        return true;
    }

    @SuppressWarnings("NonAtomicOperationOnVolatileField")
    private void readFailed(IOException e) {
        int errno = errnoOf(e);
        if (errno == Errno.EBADFD || errno == Errno.EIO || errno == Errno.ENODEV || errno == Errno.ENXIO
                || errno == Errno.EBADF) {
            deviceGone("read: " + Errno.name(errno));
            return;
        }
        tapStats.readErrors++;
        if (tapStats.readErrors == 1) {
            LOG.warn("tap {}: read failed ({}); counting further read errors silently", name(), e.toString());
        }
    }

    // ---- transmit: usnet -> kernel ----

    /** Writes on the TAP's loop: at once when already there, else through the hand-over queue. */
    @Override
    protected void xmit(Packet p) {
        if (vnetLen == 0 && p.isGso()) {
            // Linux would segment in software (validate_xmit_skb); usnet cannot yet, and a plain TAP has no way to
            // say "super-frame": drop it visibly instead of writing a frame above the MTU.
            tapStats.txGsoDropped.incrementAndGet();
            if (gsoDropLogged.compareAndSet(false, true)) {
                LOG.warn("tap {}: dropping GSO super-frames: this TAP has no virtio-net header and usnet has no software"
                        + " segmentation yet (open it with vnetHdr, or turn GSO off on the ingress TAP)", name());
            }
            dropTx(p, DropReason.PKT_TOO_BIG);
            return;
        }
        if (loop.inEventLoop()) {
            write(p);
            return;
        }
        if (closed.get() || gone) {
            dropTx(p, DropReason.DEV_DOWN);
            return;
        }
        if (!txQueue.offer(p)) {
            tapStats.txQueueDrops.incrementAndGet();
            dropTx(p, DropReason.TX_QUEUE_FULL);
            return;
        }
        if (txScheduled.compareAndSet(false, true)) {
            try {
                loop.execute(txDrain);
            } catch (RejectedExecutionException e) {
                // The loop is shutting down: nobody will write these any more.
                Packet q;
                while ((q = txQueue.poll()) != null) {
                    tapStats.txQueueDrops.incrementAndGet();
                    q.release();
                }
                txScheduled.set(false);
            }
        }
    }

    private void dropTx(Packet p, DropReason reason) {
        NetStack s = stack();
        if (s != null) {
            s.drop(p, reason);
        } else {
            p.release();
        }
    }

    private void drainTx() {
        for (int i = 0; i < TX_BUDGET; i++) {
            Packet p = txQueue.poll();
            if (p == null) {
                break;
            }
            write(p);
        }
        if (!txQueue.isEmpty()) {
            loop.execute(txDrain);
            return;
        }
        txScheduled.set(false);
        if (!txQueue.isEmpty() && txScheduled.compareAndSet(false, true)) {
            loop.execute(txDrain);
        }
    }

    /** One frame to the fd, on the loop; always releases {@code p}. */
    @SuppressWarnings("NonAtomicOperationOnVolatileField")
    private void write(Packet p) {
        try {
            if (closed.get() || gone) {
                tapStats.txDropped++;
                return;
            }
            ByteBuf b = p.buf();
            int start = p.start();
            int len = p.length();
            int n;
            if (vnetLen == 0 && b.hasMemoryAddress()) {
                n = fd.writeAddress(b.memoryAddress(), start, start + len);
            } else {
                iov.clear();
                if (vnetLen > 0) {
                    VirtioNetHdr.emit(p, vnetOut, 0);
                    iov.add(vnetOut, 0, vnetLen);
                }
                if (!b.isDirect() || !iov.add(b, start, len)) {
                    // Heap or too fragmented for the iovec array: one copy into a private direct buffer.
                    ByteBuf c = scratch(len);
                    c.setBytes(0, b, start, len);
                    iov.clear();
                    if (vnetLen > 0) {
                        iov.add(vnetOut, 0, vnetLen);
                    }
                    iov.add(c, 0, len);
                }
                n = (int) fd.writevAddresses(iov.memoryAddress(0), iov.count());
            }
            if (n == 0) {
                tapStats.writeEagain++;
            } else {
                tapStats.tx(len, p.isGso());
            }
        } catch (IOException e) {
            writeFailed(e);
        } finally {
            p.release();
        }
    }

    private ByteBuf scratch(int len) {
        if (scratch == null || scratch.capacity() < len) {
            if (scratch != null) {
                scratch.release();
            }
            scratch = Buffers.alloc().directBuffer(Math.max(len, GSO_MAX_FRAME));
        }
        return scratch;
    }

    @SuppressWarnings("NonAtomicOperationOnVolatileField")
    private void writeFailed(IOException e) {
        int errno = errnoOf(e);
        tapStats.lastWriteErrno = errno;
        if (errno == Errno.EBADFD || errno == Errno.ENODEV || errno == Errno.ENXIO || errno == Errno.EBADF) {
            tapStats.txDropped++;
            deviceGone("write: " + Errno.name(errno));
            return;
        }
        if (errno == Errno.EIO) {
            // tun refuses writes while its interface is down, as Linux drops frames sent on a link without
            // carrier; at start-up the kernel side often comes up after the first flooded frames.
            tapStats.txKernelDown++;
            return;
        }
        // EINVAL: the kernel refused the virtio-net header.
        tapStats.writeErrors++;
        if (tapStats.writeErrors == 1) {
            LOG.warn("tap {}: write failed ({}); counting further write errors silently", name(), Errno.name(errno));
        }
    }

    private static int errnoOf(IOException e) {
        if (e instanceof Errors.NativeIoException n) {
            return -n.expectedErr();
        }
        if (e instanceof ClosedChannelException) {
            return Errno.EBADF;
        }
        return 0;
    }

    // ---- faults and close ----

    /** The kernel side is gone: log once, count, stop reading, close the fd, go down. On the loop. */
    private void deviceGone(String reason) {
        if (gone) {
            return;
        }
        LOG.warn("tap {}: device gone ({})", name(), reason);
        goneReason = reason;
        tapStats.gone = 1;
        gone = true;
        setUp(false);
        closeNow();
    }

    /** Cancels the registration, closes the fd, releases buffers and queued frames. On the loop (or after it). */
    private void closeNow() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        IoRegistration r = registration;
        if (r != null && r.isValid()) {
            try {
                r.cancel();
            } catch (RuntimeException e) {
                LOG.debug("tap {}: cancelling registration failed", name(), e);
            }
        }
        try {
            fd.close();
        } catch (IOException e) {
            LOG.debug("tap {}: close failed", name(), e);
        }
        releaseBuffers();
        Packet q;
        while ((q = txQueue.poll()) != null) {
            tapStats.txDropped++;
            q.release();
        }
    }

    private void releaseBuffers() {
        if (spare != null) {
            spare.release();
            spare = null;
        }
        if (scratch != null) {
            scratch.release();
            scratch = null;
        }
        if (vnetOut.refCnt() > 0) {
            vnetOut.release();
        }
        iov.release();
    }

    /** Device deleted: close on the loop, waiting for it (the loop thread itself closes at once). */
    @Override
    protected void destroy() {
        closing = true;
        setUp(false);
        if (closed.get()) {
            return;
        }
        if (loop.inEventLoop()) {
            closeNow();
            return;
        }
        try {
            Future<?> f = loop.submit(this::closeNow);
            if (!f.awaitUninterruptibly(10, TimeUnit.SECONDS)) {
                LOG.warn("tap {}: event loop did not close the fd within 10 s", name());
            }
        } catch (RejectedExecutionException e) {
            // The loop is shutting down; its handler closes registered handles. Wait for it, then make sure.
            loop.terminationFuture().awaitUninterruptibly(10, TimeUnit.SECONDS);
            if (loop.isTerminated()) {
                closeNow();
            }
        }
    }

    @Override
    public String toString() {
        return super.toString() + " on " + tun;
    }

    /** The epoll side of the device: Netty calls it on the loop for readiness and shutdown. */
    private final class Handle implements EpollIoHandle {
        @Override
        public FileDescriptor fd() {
            return fd;
        }

        @Override
        public void handle(IoRegistration reg, IoEvent event) {
            try {
                int ops = ((EpollIoEvent) event).ops().value();
                if ((ops & (EPOLLIN | EPOLLERR | EPOLLHUP)) != 0) {
                    readReady(ops);
                }
            } catch (Throwable t) {
                // Never let a frame take the event loop down.
                tapStats.readErrors++;
                LOG.error("tap {}: unexpected error in the read path", name(), t);
            }
        }

        @Override
        public void close() {
            // The loop is shutting down (or the registration was closed): the device cannot work any more.
            setUp(false);
            closeNow();
        }
    }

    /** Netty's view of the TAP fd; closing it closes the {@link Tun} (once). */
    private static final class TunFd extends FileDescriptor {
        private final Tun tun;

        TunFd(Tun tun) {
            super(tun.fd());
            this.tun = tun;
        }

        @Override
        public void close() throws IOException {
            if (markClosed()) {
                tun.close();
            }
        }
    }
}
