package dev.usnet.core.device;

import dev.usnet.core.buf.Packet;

/** The namespace's {@code lo}: what it transmits comes back in through its own receive backlog. */
public final class Loopback extends Device {
    public Loopback() {
        super("loopback", "lo", 0L);
        setTxChecksumOffload(true);
        setGsoOffload(true);
        setMtu(65536 - 1);
    }

    @Override
    protected void xmit(Packet p) {
        // loopback_xmit: skb_orphan, the sender's charge ends as the frame is handed to the receive side.
        p.orphan();
        p.resetHop();
        stack().netifRx(this, p);
    }
}
