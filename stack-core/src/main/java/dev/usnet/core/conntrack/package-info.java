/**
 * Connection tracking for IPv4 (Linux's nf_conntrack): {@link dev.usnet.core.conntrack.ConntrackCore} puts the
 * reassembly, tracking and confirmation functions at the netfilter hooks of a namespace while something uses it,
 * {@link dev.usnet.core.conntrack.ConntrackTable} holds the connections, and one tracker per protocol (TCP with its
 * window tracking, UDP, ICMP, a generic one) judges each packet. Rules read the result from the packet
 * ({@code ct state}); NAT binds connections through the table's tuple functions.
 */
package dev.usnet.core.conntrack;
