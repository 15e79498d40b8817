#!/bin/sh
# The sysctls every packetdrill script in this tree starts from (run as `../defaults.sh`).
# Only `sysctl -q -w KEY=VALUE` lines: the usnet target interprets this file instead of running it.
# Each setting is written out even where it equals today's kernel default, so a host with tweaked
# defaults (or an older kernel) still runs the scripts under the same configuration.

# Reno: the scripts pin Reno's window arithmetic; the CUBIC scripts switch to cubic themselves.
sysctl -q -w net.ipv4.tcp_congestion_control=reno
# ECN off: no script negotiates ECN, and an ECN SYN would change every handshake line.
sysctl -q -w net.ipv4.tcp_ecn=0
# Timestamps, SACK, D-SACK and window scaling on: the options every handshake line spells out.
sysctl -q -w net.ipv4.tcp_timestamps=1
sysctl -q -w net.ipv4.tcp_sack=1
sysctl -q -w net.ipv4.tcp_dsack=1
sysctl -q -w net.ipv4.tcp_window_scaling=1
# Buffer sizes fixed at the kernel defaults, so the advertised windows (and wscale 7) are predictable.
sysctl -q -w net.ipv4.tcp_rmem="4096 131072 6291456"
sysctl -q -w net.ipv4.tcp_wmem="4096 16384 4194304"
# Half of the receive buffer is advertised as window (kernel default), which the window lines assume.
sysctl -q -w net.ipv4.tcp_adv_win_scale=1
# Smallest TSO burst the pacing-based autosizing may choose; the kernel default, so no extra deferral.
sysctl -q -w net.ipv4.tcp_min_tso_segs=2
# No route metrics saved at close: a later connection in the same script must not inherit ssthresh/RTT.
sysctl -q -w net.ipv4.tcp_no_metrics_save=1
# Autocorking off: a small write goes out at once instead of waiting for the previous skb to leave the qdisc.
sysctl -q -w net.ipv4.tcp_autocorking=0
# No slow-start restart after idle: pauses between phases of a script keep the congestion window.
sysctl -q -w net.ipv4.tcp_slow_start_after_idle=0
# Loss detection: RACK on (kernel default, the only SACK loss detector in 6.x), dupthresh 3.
sysctl -q -w net.ipv4.tcp_recovery=1
sysctl -q -w net.ipv4.tcp_reordering=3
# Tail loss probes off: a lost tail is repaired by the RTO; the TLP scripts turn it on (value 3).
sysctl -q -w net.ipv4.tcp_early_retrans=0
# F-RTO off: after an RTO the sender retransmits in slow start; the F-RTO scripts turn it on (value 2).
sysctl -q -w net.ipv4.tcp_frto=0
# SACK compression off: every out-of-order segment is SACKed at once, as kernels before 4.19 did.
sysctl -q -w net.ipv4.tcp_comp_sack_nr=0
# SYN and SYN-ACK retries at the kernel defaults; the retry scripts lower them.
sysctl -q -w net.ipv4.tcp_syn_retries=6
sysctl -q -w net.ipv4.tcp_synack_retries=5
# SYN cookies only when the SYN queue overflows (kernel default); the backlog scripts rely on it.
sysctl -q -w net.ipv4.tcp_syncookies=1
# No TCP Fast Open: no SYN carries data or a cookie request.
sysctl -q -w net.ipv4.tcp_fastopen=0
# No PMTU probing: segment sizes change only on ICMP frag-needed.
sysctl -q -w net.ipv4.tcp_mtu_probing=0
# Keep-alive defaults (2 h idle, 75 s interval, 9 probes); the keep-alive scripts set per-socket values.
sysctl -q -w net.ipv4.tcp_keepalive_time=7200
sysctl -q -w net.ipv4.tcp_keepalive_intvl=75
sysctl -q -w net.ipv4.tcp_keepalive_probes=9
