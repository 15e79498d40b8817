package dev.usnet.ns;

/** One IPv4 address as an RTM_NEWADDR answer describes it ({@code ip -4 addr}). */
public record AddrInfo(int ifindex, String dev, String cidr, String broadcast) {}
