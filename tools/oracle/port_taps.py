"""Packet sockets on the tester ends of the DUT's veth pairs: inject frames into the DUT, capture its output.

A capture socket keeps only frames the tester end *received*, which are exactly the frames the DUT sent out
of that port; the frames the recorder injects leave the tester end and are dropped by the kernel before they
are queued (PACKET_IGNORE_OUTGOING) and again here by their packet type. veth strips an 802.1Q tag into
the packet's metadata, so the tag is put back from the auxiliary data the kernel passes with each frame.
"""
import select
import socket
import struct
import time

ETH_P_ALL = 0x0003
SOL_PACKET = 263
PACKET_AUXDATA = 8
PACKET_STATISTICS = 6
PACKET_IGNORE_OUTGOING = 23
PACKET_OUTGOING = 4
TP_STATUS_VLAN_VALID = 0x10
TP_STATUS_VLAN_TPID_VALID = 0x40
_AUXDATA = struct.Struct("=IIIHHHH")
_RCVBUF = 8 << 20
_MAX_FRAME = 65536 + 64


class CaptureError(Exception):
    pass


class PortTaps:
    """Open them inside the tester namespace; they keep working from anywhere afterwards."""

    def __init__(self, tester_ifname):
        """`tester_ifname` maps a DUT port name to its tester-side interface."""
        self.send_socks = {}
        self.capture_socks = {}
        self.captured = {port: [] for port in tester_ifname}
        try:
            for port, ifname in tester_ifname.items():
                tx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0)  # protocol 0: sends, receives nothing
                self.send_socks[port] = tx
                tx.bind((ifname, 0))
                rx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
                self.capture_socks[port] = rx
                rx.setsockopt(socket.SOL_SOCKET, 33, _RCVBUF)  # SO_RCVBUFFORCE: root may exceed rmem_max
                rx.setsockopt(SOL_PACKET, PACKET_AUXDATA, 1)
                try:
                    rx.setsockopt(SOL_PACKET, PACKET_IGNORE_OUTGOING, 1)
                except OSError:
                    pass  # before Linux 4.20; the packet type check below still drops them
                rx.bind((ifname, ETH_P_ALL))
                rx.setblocking(False)
        except Exception:
            self.close()
            raise
        self._port_of = {s.fileno(): p for p, s in self.capture_socks.items()}

    def inject(self, port, frame):
        sent = self.send_socks[port].send(frame)
        if sent != len(frame):
            raise CaptureError(f"{port}: sent {sent} of {len(frame)} bytes")

    def _read_ready(self, sock, port, now):
        while True:
            try:
                data, anc, flags, addr = sock.recvmsg(_MAX_FRAME, socket.CMSG_SPACE(_AUXDATA.size), socket.MSG_TRUNC)
            except BlockingIOError:
                return
            if addr[2] == PACKET_OUTGOING:
                continue
            if flags & socket.MSG_TRUNC:
                raise CaptureError(f"{port}: a frame longer than {_MAX_FRAME} bytes was cut")
            for level, kind, payload in anc:
                if level == SOL_PACKET and kind == PACKET_AUXDATA and len(payload) >= _AUXDATA.size:
                    status, _, _, _, _, tci, tpid = _AUXDATA.unpack(payload[:_AUXDATA.size])
                    if status & TP_STATUS_VLAN_VALID:
                        tpid = tpid if status & TP_STATUS_VLAN_TPID_VALID else 0x8100
                        data = data[:12] + struct.pack("!HH", tpid, tci) + data[12:]
            self.captured[port].append((now(), data))

    def poll(self, timeout_s, now):
        """Waits up to `timeout_s` for output and stores it with the time `now()` gives."""
        ready, _, _ = select.select(list(self.capture_socks.values()), [], [], max(0.0, timeout_s))
        for sock in ready:
            self._read_ready(sock, self._port_of[sock.fileno()], now)

    def drain(self, now):
        for port, sock in self.capture_socks.items():
            self._read_ready(sock, port, now)

    def check_no_drops(self):
        """A full receive queue would silently lose frames; the kernel counts them, so ask it."""
        for port, sock in self.capture_socks.items():
            _, drops = struct.unpack("=II", sock.getsockopt(SOL_PACKET, PACKET_STATISTICS, 8))
            if drops:
                raise CaptureError(f"{port}: the capture lost {drops} frames (receive queue full)")

    def close(self):
        for s in list(self.send_socks.values()) + list(self.capture_socks.values()):
            s.close()
        self.send_socks.clear()
        self.capture_socks.clear()


def run_schedule(taps, injections, tail_s, clock=time.monotonic):
    """Sends each injection at its time after the start, captures meanwhile and for `tail_s` after the last.

    Returns the start on `clock`; captured frames carry seconds since it. Times are kept against the start,
    not slept one after another, so a slow send does not push every later frame back.
    """
    start = clock()
    since_start = lambda: clock() - start
    for inj in injections:
        while True:
            wait = inj.at_s - since_start()
            if wait <= 0:
                break
            taps.poll(wait, since_start)
        taps.inject(inj.port, inj.frame)
        taps.poll(0, since_start)
    end = (injections[-1].at_s if injections else 0) + tail_s
    while True:
        wait = end - since_start()
        if wait <= 0:
            break
        taps.poll(wait, since_start)
    taps.drain(since_start)
    taps.check_no_drops()
    return start
