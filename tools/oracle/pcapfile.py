"""Classic pcap files (Ethernet link type), the container of a fixture's in/ and expected/ frames.

Written by hand rather than through scapy so that re-recording a fixture (usnet oracle check) needs no
scapy, and so that frames keep exactly the bytes and timestamps given.
"""
import struct

LINKTYPE_ETHERNET = 1
# What the fixtures were written with; a longer frame raises it for its file.
SNAPLEN = 65535
_MAGIC_US = 0xA1B2C3D4
_MAGIC_NS = 0xA1B23C4D


class PcapError(Exception):
    pass


def read(path):
    """Returns [(timestamp_seconds, frame_bytes)] in file order; an empty file (header only or none) is []."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) == 0:
        return []
    if len(data) < 24:
        raise PcapError(f"{path}: truncated pcap header ({len(data)} bytes)")
    for endian in ("<", ">"):
        (magic,) = struct.unpack(endian + "I", data[:4])
        if magic in (_MAGIC_US, _MAGIC_NS):
            break
    else:
        raise PcapError(f"{path}: not a pcap file (magic {data[:4].hex()})")
    fraction = 1e-6 if magic == _MAGIC_US else 1e-9
    (linktype,) = struct.unpack(endian + "I", data[20:24])
    if linktype != LINKTYPE_ETHERNET:
        raise PcapError(f"{path}: link type {linktype}, expected Ethernet ({LINKTYPE_ETHERNET})")
    frames = []
    off = 24
    while off < len(data):
        if off + 16 > len(data):
            raise PcapError(f"{path}: truncated record header at byte {off}")
        sec, frac, caplen, origlen = struct.unpack(endian + "IIII", data[off:off + 16])
        off += 16
        if caplen != origlen:
            raise PcapError(f"{path}: frame {len(frames) + 1} was cut at {caplen} of {origlen} bytes")
        if off + caplen > len(data):
            raise PcapError(f"{path}: frame {len(frames) + 1} runs past the end of the file")
        frames.append((sec + frac * fraction, data[off:off + caplen]))
        off += caplen
    return frames


def write(path, frames):
    """Writes [(timestamp_seconds, frame_bytes)] as a microsecond pcap."""
    with open(path, "wb") as f:
        snaplen = max([SNAPLEN] + [len(frame) for _, frame in frames])
        f.write(struct.pack("<IHHiIII", _MAGIC_US, 2, 4, 0, 0, snaplen, LINKTYPE_ETHERNET))
        for ts, frame in frames:
            usec_total = round(ts * 1_000_000)
            f.write(struct.pack("<IIII", usec_total // 1_000_000, usec_total % 1_000_000, len(frame), len(frame)))
            f.write(frame)
