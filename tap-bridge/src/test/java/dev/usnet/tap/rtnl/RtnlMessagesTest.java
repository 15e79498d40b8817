package dev.usnet.tap.rtnl;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.junit.jupiter.api.Test;

/**
 * rtnetlink requests as bytes on the wire and answers decoded from bytes laid out as the kernel sends them (host
 * byte order, 4-byte alignment), without a kernel.
 */
class RtnlMessagesTest {
    private static MemorySegment segment(Arena a, byte[] b) {
        MemorySegment s = a.allocate(b.length, 8);
        MemorySegment.copy(b, 0, s, ValueLayout.JAVA_BYTE, 0, b.length);
        return s;
    }

    /** Little-endian (x86 host order) builder of expected or kernel-made bytes. */
    private static ByteBuffer le(int n) {
        return ByteBuffer.allocate(n).order(ByteOrder.LITTLE_ENDIAN);
    }

    @Test
    void theLayoutsHaveTheKernelsSizes() {
        assertEquals(16, NlMsgHdr.SIZE);
        assertEquals(8, IfAddrMsg.SIZE);
        assertEquals(16, IfInfoMsg.SIZE);
        assertEquals(4, RtGenMsg.SIZE);
        assertEquals(4, NlAttr.HDRLEN);
        assertEquals(20, NlMsgErr.LAYOUT.byteSize());
        assertEquals(8, IfAddrMsg.LAYOUT.byteOffset(java.lang.foreign.MemoryLayout.PathElement.groupElement("ifa_index")) + 4);
    }

    @Test
    void anAddressDumpByNsidIsHeaderIfaddrmsgAndOneAttribute() {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment s = a.allocate(64, 8);
            int len = RtnlRequest.getAddrDump(s, 7, 2, 5);
            ByteBuffer want = le(32);
            want.putInt(32).putShort((short) 22).putShort((short) (0x01 | 0x300)).putInt(7).putInt(0);
            want.put((byte) 2).put((byte) 0).put((byte) 0).put((byte) 0).putInt(0);
            want.putShort((short) 8).putShort((short) 10).putInt(5);
            assertEquals(32, len);
            assertArrayEquals(want.array(), s.asSlice(0, len).toArray(ValueLayout.JAVA_BYTE));
            // Without a target the attribute is left out.
            assertEquals(24, RtnlRequest.getAddrDump(s, 8, 2, -1));
            assertEquals(24, NlMsgHdr.len(s, 0));
        }
    }

    @Test
    void nsidAndAddressRequestsCarryTheirAttributes() {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment s = a.allocate(128, 8);
            int len = RtnlRequest.newNsid(s, 3, 42, RtGenMsg.NSID_NOT_ASSIGNED);
            ByteBuffer want = le(36);
            want.putInt(36).putShort((short) 88).putShort((short) 0x05).putInt(3).putInt(0);
            want.put((byte) 0).put((byte) 0).put((byte) 0).put((byte) 0);
            want.putShort((short) 8).putShort((short) 3).putInt(42);
            want.putShort((short) 8).putShort((short) 1).putInt(-1);
            assertArrayEquals(want.array(), s.asSlice(0, len).toArray(ValueLayout.JAVA_BYTE));

            len = RtnlRequest.newAddr4(s, 4, 1, new byte[] {(byte) 198, 18, 7, 1}, 32, IfAddrMsg.RT_SCOPE_UNIVERSE);
            assertEquals(16 + 8 + 8 + 8, len);
            assertEquals(Rtm.NEWADDR, NlMsgHdr.type(s, 0));
            assertEquals(0x01 | 0x04 | 0x400 | 0x200, NlMsgHdr.flags(s, 0));
            assertEquals(32, IfAddrMsg.prefixLen(s, 16));
            assertEquals(1, IfAddrMsg.index(s, 16));
            assertEquals(IfAddrMsg.IFA_LOCAL, NlAttr.type(s, 24));
            assertArrayEquals(new byte[] {(byte) 198, 18, 7, 1}, NlAttr.getBytes(s, 24));

            len = RtnlRequest.moveLink(s, 5, 9, 11);
            assertEquals(16 + 16 + 8, len);
            assertEquals(9, IfInfoMsg.index(s, 16));
            assertEquals(IfInfoMsg.IFLA_NET_NS_FD, NlAttr.type(s, 32));
            assertEquals(11, NlAttr.getInt(s, 32));
        }
    }

    /** An RTM_NEWADDR as the kernel answers a dump by nsid: multi-part, with IFA_TARGET_NETNSID echoed. */
    private static byte[] newAddr(int seq, int ifindex, byte[] local, int prefix, String label, int nsid) {
        byte[] lab = (label + "\0").getBytes(java.nio.charset.StandardCharsets.US_ASCII);
        int labAttr = (4 + lab.length + 3) & ~3;
        int len = 16 + 8 + 8 + 8 + 8 + labAttr + 8 + 8;
        ByteBuffer b = le(len);
        b.putInt(len).putShort((short) 20).putShort((short) 0x02).putInt(seq).putInt(1234);
        b.put((byte) 2).put((byte) prefix).put((byte) 0x80).put((byte) 0).putInt(ifindex);
        b.putShort((short) 8).putShort((short) 1).put(local);
        b.putShort((short) 8).putShort((short) 2).put(local);
        byte[] brd = local.clone();
        brd[3] = (byte) 255;
        b.putShort((short) 8).putShort((short) 4).put(brd);
        b.putShort((short) (4 + lab.length)).putShort((short) 3).put(lab);
        b.position(b.position() + labAttr - 4 - lab.length);
        b.putShort((short) 8).putShort((short) 8).putInt(0x80);
        b.putShort((short) 8).putShort((short) 10).putInt(nsid);
        return b.array();
    }

    @Test
    void anRtmNewaddrDecodesToWhatIpAddrShows() {
        byte[] m = newAddr(7, 3, new byte[] {(byte) 198, 18, 0, 1}, 24, "eth0", 4);
        try (Arena a = Arena.ofConfined()) {
            RtnlAddr r = RtnlAddr.parse(segment(a, m), 0, m.length);
            assertEquals(new RtnlAddr(2, 24, 0x80, 0, 3, "198.18.0.1", "198.18.0.1", "198.18.0.255", "eth0", 4), r);
            assertEquals("198.18.0.1/24", r.cidr());
        }
    }

    @Test
    void anAttributeRunningPastItsMessageIsRefused() {
        byte[] m = newAddr(7, 3, new byte[] {(byte) 198, 18, 0, 1}, 24, "eth0", 4);
        // The first attribute claims 200 bytes.
        m[24] = (byte) 200;
        try (Arena a = Arena.ofConfined()) {
            MemorySegment s = segment(a, m);
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> RtnlAddr.parse(s, 0, m.length));
            assertTrue(e.getMessage().contains("runs past the message"), e.getMessage());
            assertThrows(IllegalArgumentException.class, () -> RtnlAddr.parse(s, 0, 20));
        }
    }

    @Test
    void theKernelsReasonIsReadFromAnExtendedAck() {
        String why = "Invalid target network namespace id";
        byte[] txt = (why + "\0").getBytes(java.nio.charset.StandardCharsets.US_ASCII);
        int attr = (4 + txt.length + 3) & ~3;
        int len = 16 + 20 + attr;
        ByteBuffer b = le(len);
        // NLMSG_ERROR, capped (the request's payload left out), with TLVs.
        b.putInt(len).putShort((short) 2).putShort((short) 0x300).putInt(9).putInt(0);
        b.putInt(-22).putInt(32).putShort((short) 22).putShort((short) 0x301).putInt(9).putInt(0);
        b.putShort((short) (4 + txt.length)).putShort((short) 1).put(txt);
        try (Arena a = Arena.ofConfined()) {
            MemorySegment s = segment(a, b.array());
            assertEquals(-22, NlMsgErr.error(s, 16));
            assertEquals(why, RtnlSocket.extAckMessage(s, 0, len));
            // Without NLM_F_ACK_TLVS there is nothing to read.
            s.set(ValueLayout.JAVA_SHORT, 6, (short) 0x100);
            assertNull(RtnlSocket.extAckMessage(s, 0, len));
        }
        // A dump refused once started ends in NLMSG_DONE: the error int, then the TLVs.
        int dlen = 16 + 4 + attr;
        ByteBuffer d = le(dlen);
        d.putInt(dlen).putShort((short) 3).putShort((short) (0x02 | 0x200)).putInt(9).putInt(0);
        d.putInt(-22);
        d.putShort((short) (4 + txt.length)).putShort((short) 1).put(txt);
        try (Arena a = Arena.ofConfined()) {
            assertEquals(why, RtnlSocket.extAckMessage(segment(a, d.array()), 0, dlen));
        }
    }
}
