package dev.usnet.core.buf;

import io.netty.buffer.ByteBuf;
import io.netty.util.Recycler;
import io.netty.util.internal.SystemPropertyUtil;

/**
 * usnet's sk_buff: a recycled holder of one pooled direct ByteBuf plus the metadata the stack needs.
 * The frame occupies [readerIndex, writerIndex) of {@link #buf()}, starting at the link-layer header.
 * A packet has exactly one owner at a time; whoever holds it last calls {@link #release()}.
 */
public final class Packet {
    /** skb->pkt_type values. */
    public static final int PACKET_HOST = 0;
    public static final int PACKET_BROADCAST = 1;
    public static final int PACKET_MULTICAST = 2;
    public static final int PACKET_OTHERHOST = 3;
    public static final int PACKET_OUTGOING = 4;

    /** IPCB flags. */
    public static final int IPSKB_FORWARDED = 1;
    public static final int IPSKB_DOREDIRECT = 2;
    public static final int IPSKB_FRAG_PMTU = 4;

    public static final int GSO_NONE = 0;
    public static final int GSO_TCPV4 = 1;
    public static final int GSO_UDP = 3;
    public static final int GSO_TCPV6 = 4;

    /**
     * Size of the control buffer in 64-bit words: Linux's skb->cb is 48 bytes, room for TCP_SKB_CB and the
     * like. The stack itself never reads it.
     */
    public static final int CB_WORDS = 6;

    /** Linux's NET_SKB_PAD on x86-64 (max(32, L1_CACHE_BYTES)): the step headroom grows by. */
    private static final int NET_SKB_PAD = 64;

    /**
     * Holders one thread keeps for reuse. A flood to N bridge ports has N clones in flight at once, which Netty's
     * defaults (4 096 per thread, and only one new holder in 8 pooled at all) would mostly leave to the garbage
     * collector on every flood; the slab an sk_buff comes from has no such limit. At ~200 bytes a holder this is
     * at most ~13 MB per thread, held only after that many were in flight together.
     */
    static final int RECYCLER_CAPACITY_PER_THREAD = 65_536;

    private static final Recycler<Packet> RECYCLER = new Recycler<>(RECYCLER_CAPACITY_PER_THREAD, 1,
            SystemPropertyUtil.getInt("io.netty.recycler.chunkSize", 32)) {
        @Override
        protected Packet newObject(Handle<Packet> handle) {
            return new Packet(handle);
        }
    };

    private final Recycler.Handle<Packet> handle;
    private ByteBuf buf;
    private int network = -1;
    private int transport = -1;
    private PacketDevice dev;
    private long rxTimeNanos;
    private int pktType;
    private int ipFlags;
    private boolean cloned;
    private boolean flooded;
    private ChecksumState csumState = ChecksumState.NONE;
    private int csumStart;
    private int csumOffset;
    private int gsoType;
    private int gsoSize;
    private int gsoSegs;
    private int cowBytes;
    private int optRr;
    private int optTs;
    private int optFlags;
    // skb->next: the packet behind this one on the one queue that holds it (a namespace's receive backlog).
    private Packet next;
    // skb->cb: scratch space private to the layer that holds the packet, as fields of the holder itself: TCP reads
    // a segment's sequence numbers and state from it for every segment an ACK covers, long after the segment was
    // sent, and an array beside the holder was one more cache line to miss there.
    private long cb0;
    private long cb1;
    private long cb2;
    private long cb3;
    private long cb4;
    private long cb5;
    // skb->sk + skb->destructor: who is told when this packet stops occupying memory below it, and how many
    // bytes it is charged for (skb->truesize in Linux; see setOwner).
    private TxCompletion owner;
    private int ownerBytes;
    // skb->_nfct: the connection-tracking entry this packet belongs to (an object of the netfilter layer, which
    // this package does not know) and how (ctinfo, IP_CT_*); skb->mark: the firewall mark rules set and match.
    private Object nfct;
    private int ctinfo;
    private int mark;
    // skb's nf_bridge extension, reduced to what br_netfilter keeps here: the ifindex of the bridge port a bridged
    // IPv4 frame came in by (physindev), 0 when the frame did not pass a bridge's netfilter; and for a frame
    // waiting for the next hop of a bridged DNAT, its own source MAC, which the neighbour layer overwrites (0: none).
    private int nfBridgePhysIn;
    private long nfBridgeDnatSrc;

    private Packet(Recycler.Handle<Packet> handle) {
        this.handle = handle;
    }

    /** Takes ownership of {@code buf}, whose readable bytes are one frame. */
    public static Packet wrap(ByteBuf buf) {
        Packet p = RECYCLER.get();
        p.buf = buf;
        return p;
    }

    /** A fresh packet with {@code headroom} bytes in front of an empty frame of up to {@code capacity} bytes. */
    public static Packet allocate(int headroom, int capacity) {
        ByteBuf b = Buffers.alloc().directBuffer(headroom + capacity);
        b.writerIndex(headroom).readerIndex(headroom);
        return wrap(b);
    }

    public ByteBuf buf() {
        return buf;
    }

    /** Index of the first byte of the frame (the MAC header). */
    public int start() {
        return buf.readerIndex();
    }

    public int length() {
        return buf.readableBytes();
    }

    public int network() {
        return network;
    }

    public void setNetwork(int index) {
        this.network = index;
    }

    public int transport() {
        return transport;
    }

    public void setTransport(int index) {
        this.transport = index;
    }

    /**
     * skb->dev: the device the packet arrived on or leaves by, as the caller's device type (the packet layer sits
     * below the devices and cannot name their class; every device is a {@link PacketDevice}).
     */
    @SuppressWarnings("unchecked")
    public <D extends PacketDevice> D dev() {
        return (D) dev;
    }

    public void setDev(PacketDevice dev) {
        this.dev = dev;
    }

    /**
     * A copy a bridge floods (to every port, not to the one its FDB names): its forwarding latency goes to the
     * ingress port's flood path, not to a path per egress port. Cleared when a device receives it.
     */
    public boolean isFlooded() {
        return flooded;
    }

    public void setFlooded(boolean flooded) {
        this.flooded = flooded;
    }

    public long rxTimeNanos() {
        return rxTimeNanos;
    }

    public void setRxTimeNanos(long t) {
        this.rxTimeNanos = t;
    }

    public int pktType() {
        return pktType;
    }

    public void setPktType(int t) {
        this.pktType = t;
    }

    public int ipFlags() {
        return ipFlags;
    }

    public void setIpFlags(int f) {
        this.ipFlags = f;
    }

    public ChecksumState csumState() {
        return csumState;
    }

    public int csumStart() {
        return csumStart;
    }

    public int csumOffset() {
        return csumOffset;
    }

    public void setChecksum(ChecksumState state, int start, int offset) {
        this.csumState = state;
        this.csumStart = start;
        this.csumOffset = offset;
    }

    public int gsoType() {
        return gsoType;
    }

    public int gsoSize() {
        return gsoSize;
    }

    public void setGso(int type, int size) {
        this.gsoType = type;
        this.gsoSize = size;
    }

    public boolean isGso() {
        return gsoType != GSO_NONE && gsoSize > 0;
    }

    /**
     * skb_shinfo(skb)->gso_segs: the wire segments a GRO-merged packet was made of (tcp_gro_complete sets it to
     * NAPI_GRO_CB(skb)->count); 0 when nobody counted them (a sender's own GSO packet).
     */
    public int gsoSegs() {
        return gsoSegs;
    }

    public void setGsoSegs(int segs) {
        this.gsoSegs = segs;
    }

    /** Bytes copy-on-write copied in this packet's current hop (reset when it crosses a veth). */
    public int cowBytes() {
        return cowBytes;
    }

    /** IPCB(skb)->opt: offsets (from the IP header) of a record-route and a timestamp option compiled on input. */
    public int optRr() {
        return optRr;
    }

    public int optTs() {
        return optTs;
    }

    /** IpOptions' RR_NEEDADDR / TS_NEEDADDR / TS_NEEDTIME bits. */
    public int optFlags() {
        return optFlags;
    }

    public void setIpOptions(int rr, int ts, int flags) {
        optRr = rr;
        optTs = ts;
        optFlags = flags;
    }

    public void resetHop() {
        optRr = 0;
        optTs = 0;
        optFlags = 0;
        cowBytes = 0;
        ipFlags = 0;
        network = -1;
        transport = -1;
    }

    /** The connection-tracking entry (skb->_nfct), or null: not tracked, or invalid. */
    @SuppressWarnings("unchecked")
    public <T> T nfct() {
        return (T) nfct;
    }

    /** How this packet relates to its entry (IP_CT_ESTABLISHED, _RELATED, _NEW, _ESTABLISHED_REPLY ...). */
    public int ctinfo() {
        return ctinfo;
    }

    /** nf_ct_set: attaches the packet to {@code ct} (null detaches) as {@code info}. */
    public void setNfct(Object ct, int info) {
        this.nfct = ct;
        this.ctinfo = info;
    }

    /** The firewall mark (skb->mark). */
    public int mark() {
        return mark;
    }

    public void setMark(int mark) {
        this.mark = mark;
    }

    /**
     * skb_scrub_packet for a packet that passed a veth pair: its connection-tracking entry stays behind (the peer
     * tracks it afresh, as nf_reset_ct), and so does what a bridge's netfilter recorded of it; the mark too when it
     * entered another namespace.
     */
    public void scrubNetfilter(boolean crossedNamespace) {
        nfct = null;
        ctinfo = 0;
        nfBridgePhysIn = 0;
        nfBridgeDnatSrc = 0;
        if (crossedNamespace) {
            mark = 0;
        }
    }

    /**
     * The ifindex of the bridge port this frame came in by when the bridge ran the IPv4 netfilter hooks over it
     * (br_netfilter's physindev), or 0. Its IPv4 prerouting hooks already ran in the bridge: the IPv4 input path does
     * not run them again when the bridge passes the frame up to its own stack.
     */
    public int nfBridgePhysIn() {
        return nfBridgePhysIn;
    }

    public void setNfBridgePhysIn(int ifindex) {
        this.nfBridgePhysIn = ifindex;
    }

    /**
     * A bridged frame whose destination NAT led to a next hop on the same bridge whose address was not known yet:
     * the frame's own source MAC, put back when the neighbour layer hands the frame to the bridge to go on being
     * bridged (nf_bridge's bridged_dnat and saved header); 0 otherwise.
     */
    public long nfBridgeDnatSrc() {
        return nfBridgeDnatSrc;
    }

    public void setNfBridgeDnatSrc(long mac) {
        this.nfBridgeDnatSrc = mac;
    }

    /**
     * Word {@code i} of the control buffer (skb->cb): private to the layer that holds the packet (TCP keeps its
     * per-segment state there, as TCP_SKB_CB does); copied to clones, zeroed when the holder is recycled.
     */
    public long cb(int i) {
        return switch (i) {
            case 0 -> cb0;
            case 1 -> cb1;
            case 2 -> cb2;
            case 3 -> cb3;
            case 4 -> cb4;
            case 5 -> cb5;
            default -> throw new IndexOutOfBoundsException("cb word " + i + " of " + CB_WORDS);
        };
    }

    public void setCb(int i, long v) {
        switch (i) {
            case 0 -> cb0 = v;
            case 1 -> cb1 = v;
            case 2 -> cb2 = v;
            case 3 -> cb3 = v;
            case 4 -> cb4 = v;
            case 5 -> cb5 = v;
            default -> throw new IndexOutOfBoundsException("cb word " + i + " of " + CB_WORDS);
        }
    }

    /** skb->next: the packet behind this one on the queue that holds it, or null. Only that queue uses it. */
    public Packet next() {
        return next;
    }

    public void setNext(Packet p) {
        this.next = p;
    }

    /**
     * skb_set_owner_w: {@code owner} is charged {@code bytes} for this packet until it is completed, orphaned or
     * released, when {@link TxCompletion#completed} runs exactly once. Clones do not inherit the owner
     * (skb_clone leaves clone->sk NULL).
     */
    public void setOwner(TxCompletion owner, int bytes) {
        if (this.owner != null) {
            throw new IllegalStateException("packet already has an owner");
        }
        this.owner = owner;
        this.ownerBytes = bytes;
    }

    /** skb->sk: who is charged for this packet below it, or null. */
    public TxCompletion owner() {
        return owner;
    }

    /** The bytes {@link #owner()} is charged for this packet (0 without an owner). */
    public int ownerBytes() {
        return ownerBytes;
    }

    /**
     * skb_orphan: runs the owner's completion now and forgets the owner. A device calls it at transmit
     * completion, a veth at xmit, {@link #release()} for whatever is dropped or freed first. No-op without one.
     */
    public void orphan() {
        TxCompletion o = owner;
        if (o != null) {
            try {
                o.completed(this);
            } finally {
                owner = null;
                ownerBytes = 0;
            }
        }
    }

    /**
     * Gives up the owner without completing: for a packet whose charge moves to others (GSO segmentation hands
     * the original's bytes to its segments, which complete them). Returns the bytes that were charged.
     */
    public int detachOwner() {
        int b = ownerBytes;
        owner = null;
        ownerBytes = 0;
        return b;
    }

    /** Set when a clone was ever made of this packet (skb->cloned). */
    public boolean isCloned() {
        return cloned;
    }

    /**
     * True while another holder still references these bytes (skb_cloned: the cloned flag plus the shared
     * data reference count), so editing them in place would change what the other holder sees.
     */
    public boolean isShared() {
        if (!cloned) {
            return false;
        }
        // Derived views (duplicates, slices, leak-detector wrappers) share the root's reference count.
        ByteBuf root = buf;
        for (ByteBuf u = root.unwrap(); u != null; u = u.unwrap()) {
            root = u;
        }
        return root.refCnt() > 1;
    }

    /**
     * A second holder of the same bytes (skb_clone): the data is shared, not copied, and both packets are
     * marked cloned. The clone carries the same metadata.
     */
    public Packet cloneShared() {
        Packet c = RECYCLER.get();
        c.buf = buf.retainedDuplicate();
        c.copyMeta(this);
        this.cloned = true;
        c.cloned = true;
        return c;
    }

    /**
     * Makes the first {@code headLen} bytes of the frame private (skb_cow): when the packet is shared the
     * headers are copied per {@code policy} and the copy is counted; an unshared packet is left alone unless
     * the policy is {@link CowPolicy#ALWAYS_COPY}. Returns false when the policy says not to edit a shared
     * packet at all ({@link CowPolicy#SKIP_TTL}).
     */
    public boolean makeWritable(int headLen, CowPolicy policy, CowStats stats) {
        return makeWritable(headLen, 0, policy, stats);
    }

    /**
     * skb_cow(skb, headroom) as ip_forward calls it: the first {@code headLen} bytes of the frame become
     * private when the packet is shared, as {@link #makeWritable(int, CowPolicy, CowStats)} does, and also when
     * fewer than {@code networkHeadroom} bytes of the buffer lie in front of the network header (Linux measures
     * skb_headroom at skb->data, the IP header, against LL_RESERVED_SPACE of the outgoing device). A short
     * headroom makes even an unshared packet a copy, with the same policy's notion of what is copied
     * (head-copy: the headers; full-copy and always-copy: the frame), into a buffer with room enough; it is
     * counted in {@code stats} as a copy and as a {@link CowStats#headroomCopies() headroom copy}. Without a
     * copy nothing is allocated.
     */
    public boolean makeWritable(int headLen, int networkHeadroom, CowPolicy policy, CowStats stats) {
        boolean shared = isShared();
        if (shared && stats != null) {
            stats.sawShared();
        }
        boolean shortRoom = network >= 0 && network < networkHeadroom;
        int front = shortRoom ? frontRoomFor(networkHeadroom) : Buffers.HEADROOM;
        if (shortRoom && !shared && policy != CowPolicy.ALWAYS_COPY && stats != null) {
            stats.headroomCopy();
        }
        switch (policy) {
            case HEAD_COPY -> {
                if (shared || shortRoom) {
                    copyHead(headLen, front, stats);
                }
            }
            case FULL_COPY -> {
                if (shared || shortRoom) {
                    copyAll(front, stats);
                }
            }
            case ALWAYS_COPY -> copyAll(front, stats);
            case SKIP_TTL -> {
                if (shared) {
                    // The link-layer header is each holder's own (in Linux it lives in per-clone headroom),
                    // so only it is made private; IP stays shared and untouched.
                    splitHead(14, front, null);
                    stats.skipped();
                    return false;
                }
                if (shortRoom) {
                    copyHead(headLen, front, stats);
                }
            }
        }
        return true;
    }

    /**
     * Room to keep in front of the frame so that {@code networkHeadroom} bytes precede the network header:
     * pskb_expand_head grows the headroom by the shortfall rounded up to NET_SKB_PAD-sized steps; here the new
     * buffer gets the usual {@link Buffers#HEADROOM}, or more in such steps.
     */
    private int frontRoomFor(int networkHeadroom) {
        int l2 = network - buf.readerIndex();
        int need = networkHeadroom - l2;
        if (need <= Buffers.HEADROOM) {
            return Buffers.HEADROOM;
        }
        return (need + NET_SKB_PAD - 1) / NET_SKB_PAD * NET_SKB_PAD;
    }

    /** Bytes of the buffer in front of the frame (skb_headroom at the MAC header). */
    public int headroom() {
        return buf.readerIndex();
    }

    /** Replaces the data with a private copy of the whole frame, with {@link Buffers#HEADROOM} in front. */
    public void copyAll(CowStats stats) {
        copyAll(Buffers.HEADROOM, stats);
    }

    /**
     * Replaces the data with a private copy of the whole frame, {@code front} bytes of headroom in front of it
     * (pskb_expand_head keeps the headroom; a copy without any would make the next push a copy again).
     */
    private void copyAll(int front, CowStats stats) {
        int len = buf.readableBytes();
        ByteBuf copy = Buffers.alloc().directBuffer(front + len);
        copy.setBytes(front, buf, buf.readerIndex(), len);
        copy.setIndex(front, front + len);
        replaceData(copy, buf.readerIndex(), front);
        if (stats != null) {
            stats.copied(len);
            cowBytes += len;
        }
    }

    /** Copies the first {@code headLen} bytes into a private buffer; the rest stays shared. */
    private void copyHead(int headLen, int front, CowStats stats) {
        if (headLen >= buf.readableBytes()) {
            copyAll(front, stats);
            return;
        }
        splitHead(headLen, front, stats);
    }

    /**
     * pskb_expand_head: the first {@code headLen} bytes go into a new private head with {@code front} bytes
     * in front of them; the rest of the frame stays where it is, in the buffer shared with the clone, as
     * the head's one frag. The packet's reference to the shared buffer becomes the frag's, so nothing but
     * the head (a pooled buffer) and a recycled {@link HeadFragByteBuf} is taken.
     */
    private void splitHead(int headLen, int front, CowStats stats) {
        int len = buf.readableBytes();
        int start = buf.readerIndex();
        int split = front + headLen;
        ByteBuf head = Buffers.alloc().directBuffer(split);
        head.setBytes(front, buf, start, headLen);
        HeadFragByteBuf data = HeadFragByteBuf.of(head, split, buf, start + headLen, len - headLen);
        data.setIndex(front, front + len);
        buf = null;
        replaceData(data, start, front);
        if (stats != null) {
            stats.copied(headLen);
            cowBytes += headLen;
        }
    }

    /** Swaps in new data whose frame starts at {@code newStart}; header indices move with it. */
    private void replaceData(ByteBuf data, int oldStart, int newStart) {
        int shift = newStart - oldStart;
        if (buf != null) {
            buf.release();
        }
        buf = data;
        cloned = false;
        if (network >= 0) {
            network += shift;
        }
        if (transport >= 0) {
            transport += shift;
        }
        if (csumState == ChecksumState.PARTIAL) {
            csumStart += shift;
        }
    }

    /**
     * pskb_expand_head(skb, 0, ntail): makes sure {@code tailroom} bytes can be written after the frame into a
     * buffer only this packet references. When the data is shared, or the buffer is not a plain one with that
     * much room, the frame is copied once into a pooled buffer with {@link Buffers#HEADROOM} in front and the
     * room behind it (not counted as a copy-on-write copy: nothing forwarded it). Returns whether it copied.
     */
    public boolean ensureTailroom(int tailroom) {
        ByteBuf b = buf;
        if (!isShared() && !isHeadFrag(b) && b.capacity() - b.writerIndex() >= tailroom) {
            return false;
        }
        int len = b.readableBytes();
        ByteBuf copy = Buffers.alloc().directBuffer(Buffers.HEADROOM + len + tailroom);
        copy.setBytes(Buffers.HEADROOM, b, b.readerIndex(), len);
        copy.setIndex(Buffers.HEADROOM, Buffers.HEADROOM + len);
        replaceData(copy, b.readerIndex(), Buffers.HEADROOM);
        return true;
    }

    private static boolean isHeadFrag(ByteBuf b) {
        for (ByteBuf u = b; u != null; u = u.unwrap()) {
            if (u instanceof HeadFragByteBuf) {
                return true;
            }
        }
        return false;
    }

    /** Moves the frame start back by {@code n} bytes of headroom (skb_push); returns the new start. */
    public int push(int n) {
        int s = buf.readerIndex() - n;
        if (s < 0) {
            throw new IllegalStateException("no headroom for " + n + " bytes");
        }
        buf.readerIndex(s);
        return s;
    }

    /** Drops {@code n} bytes from the front of the frame (skb_pull). */
    public int pull(int n) {
        buf.readerIndex(buf.readerIndex() + n);
        return buf.readerIndex();
    }

    /** Cuts the frame to {@code len} bytes (pskb_trim), e.g. Ethernet padding after the IP total length. */
    public void trim(int len) {
        if (len < buf.readableBytes()) {
            buf.writerIndex(buf.readerIndex() + len);
        }
    }

    private void copyMeta(Packet o) {
        network = o.network;
        transport = o.transport;
        dev = o.dev;
        rxTimeNanos = o.rxTimeNanos;
        pktType = o.pktType;
        ipFlags = o.ipFlags;
        csumState = o.csumState;
        csumStart = o.csumStart;
        csumOffset = o.csumOffset;
        gsoType = o.gsoType;
        gsoSize = o.gsoSize;
        gsoSegs = o.gsoSegs;
        optRr = o.optRr;
        optTs = o.optTs;
        optFlags = o.optFlags;
        flooded = o.flooded;
        cb0 = o.cb0;
        cb1 = o.cb1;
        cb2 = o.cb2;
        cb3 = o.cb3;
        cb4 = o.cb4;
        cb5 = o.cb5;
        nfct = o.nfct;
        ctinfo = o.ctinfo;
        mark = o.mark;
        nfBridgePhysIn = o.nfBridgePhysIn;
        nfBridgeDnatSrc = o.nfBridgeDnatSrc;
    }

    /** Releases the data reference and returns this holder to the pool. Must be the last use. */
    public void release() {
        // kfree_skb → skb_release_head_state: the destructor runs for whatever is freed, dropped or not.
        orphan();
        ByteBuf b = buf;
        buf = null;
        next = null;
        network = -1;
        transport = -1;
        dev = null;
        rxTimeNanos = 0;
        pktType = 0;
        ipFlags = 0;
        cloned = false;
        flooded = false;
        csumState = ChecksumState.NONE;
        csumStart = 0;
        csumOffset = 0;
        gsoType = 0;
        gsoSize = 0;
        gsoSegs = 0;
        cowBytes = 0;
        optRr = 0;
        optTs = 0;
        optFlags = 0;
        cb0 = 0;
        cb1 = 0;
        cb2 = 0;
        cb3 = 0;
        cb4 = 0;
        cb5 = 0;
        nfct = null;
        ctinfo = 0;
        mark = 0;
        nfBridgePhysIn = 0;
        nfBridgeDnatSrc = 0;
        if (b != null) {
            b.release();
        }
        handle.recycle(this);
    }
}
