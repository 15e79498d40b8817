#!/usr/bin/env bash
# Linux GRO on a veth, for comparing usnet's GRO (docs/data-plane.md, "GRO against a kernel"). Needs root, iproute2,
# ethtool, tcpdump and python3. Two namespaces it creates (usgro-a, usgro-b; 198.18.77.0/24), a veth va -> vb, TSO
# and GSO off on va so the kernel's TCP sends MSS-sized frames, GRO on vb (which gives a veth its NAPI context);
# a 4 MiB TCP stream a -> b; tcpdump on vb sees what GRO delivered. Prints the histogram of TCP payload lengths
# seen on vb and deletes what it created.
#
#   sudo perf-tests/gro-kernel-check.sh            # 4 MiB
#   sudo perf-tests/gro-kernel-check.sh 16         # MiB
set -euo pipefail
MIB=${1:-4}
OUT=$(mktemp -d)
cleanup() {
    ip netns del usgro-a 2>/dev/null || true
    ip netns del usgro-b 2>/dev/null || true
    rm -rf "$OUT"
}
trap cleanup EXIT
cleanup
OUT=$(mktemp -d)
ip netns add usgro-a
ip netns add usgro-b
ip link add va netns usgro-a type veth peer name vb netns usgro-b
ip -n usgro-a addr add 198.18.77.1/24 dev va
ip -n usgro-b addr add 198.18.77.2/24 dev vb
ip -n usgro-a link set va up
ip -n usgro-b link set vb up
ip netns exec usgro-a ethtool -K va tso off gso off
ip netns exec usgro-b ethtool -K vb gro on
echo "kernel $(uname -r); vb: $(ip netns exec usgro-b ethtool -k vb | grep generic-receive-offload)"
ip netns exec usgro-b tcpdump -i vb -nn -l 'tcp and dst port 5001' > "$OUT/vb.txt" 2>/dev/null &
TD=$!
ip netns exec usgro-b python3 -c '
import socket
s = socket.socket(); s.bind(("198.18.77.2", 5001)); s.listen(1); c, _ = s.accept(); n = 0
while True:
    b = c.recv(1 << 20)
    if not b: break
    n += len(b)
print("received", n, "bytes")' &
SV=$!
sleep 0.5
ip netns exec usgro-a python3 -c "
import socket
s = socket.create_connection(('198.18.77.2', 5001)); s.sendall(b'x' * ($MIB << 20)); s.close()"
wait $SV
sleep 0.5
kill $TD; wait $TD 2>/dev/null || true
echo "frames the sender sent (va tx_packets): $(ip -n usgro-a -s -j link show va | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["stats64"]["tx"]["packets"])')"
echo "packets tcpdump saw on vb, by TCP payload length (count length):"
awk '{for (i = 1; i <= NF; i++) if ($i == "length") print $(i + 1)}' "$OUT/vb.txt" | sort -n | uniq -c | sort -rn | head -12
