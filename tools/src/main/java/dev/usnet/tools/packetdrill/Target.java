package dev.usnet.tools.packetdrill;

import java.util.Map;

/**
 * The system under test of a packetdrill script: a network namespace holding the sockets the script's system
 * calls make, and a layer-3 test device ({@code tun0}) on which the runner plays the remote host, injecting
 * packets ({@code <} lines) and sniffing what the stack sends ({@code >} lines).
 *
 * <p>Two implementations: {@code UsnetTarget} (a usnet namespace, virtual time: the clock moves only in
 * {@link #advanceTo} and while waiting in {@link #sniff} or {@link #awaitCall}) and {@code KernelTarget}
 * (a fresh Linux namespace with a TAP/TUN named {@code tun0}, system calls made by a thread that entered it,
 * real time). The runner owns the script, its time line, packet building and matching; a target only moves
 * bytes and makes calls.
 *
 * <p>Time is script time in microseconds: 0 is the moment {@link #start} returned.
 */
public interface Target extends AutoCloseable {

    /** Creates the namespace and the test device for these options. Nothing is sent yet. */
    void open(ScriptOptions options);

    /**
     * Sets a sysctl as {@code sysctl -w key=value} would in the test namespace (dotted or slash form,
     * {@code net.ipv4.tcp_sack}). A key the target does not know fails naming it.
     */
    void sysctl(String key, String value);

    /** {@code tc qdisc replace dev tun0 root pfifo limit N}: the device's transmit queue; 0 drops every packet sent. */
    void setTransmitQueueLimit(int packets);

    /** Starts the clock: script time 0 is now. */
    void start();

    /** Script time now, µs. */
    long nowMicros();

    /**
     * Lets time pass until {@code micros} (virtual time: runs every event due up to then; real time: sleeps).
     * Packets the stack sends meanwhile are kept for {@link #sniff}.
     */
    void advanceTo(long micros);

    /** Delivers an IPv4 packet (IP header first, checksums filled in) from the remote host to the stack, now. */
    void inject(byte[] ipPacket);

    /**
     * The next packet the stack sent on the test device (oldest first), waiting until script time
     * {@code deadlineMicros} for one; null if none was sent by then.
     */
    Sniffed sniff(long deadlineMicros);

    /** Starts a system call now. See {@link PendingCall} for blocking calls. */
    PendingCall call(Syscall call);

    /** Waits until {@code call} is done or script time {@code deadlineMicros} passes; true if it is done. */
    boolean awaitCall(PendingCall call, long deadlineMicros);

    /**
     * {@code getsockopt(fd, IPPROTO_TCP, TCP_INFO)} as a map of {@code tcpi_*} field names to values
     * ({@code tcpi_snd_cwnd}, {@code tcpi_ca_state}, {@code tcpi_rto} in µs, ...), for {@code %{ }%} asserts.
     */
    Map<String, Long> tcpInfo(int fd);

    /**
     * Runs a backtick command of the script. The kernel target runs it with /bin/sh in the test namespace from
     * the script's directory; the usnet target understands the commands published scripts use (sysctl lines,
     * {@code ip tcp_metrics flush}, {@code tc qdisc ... pfifo limit N}) and fails naming anything else.
     *
     * @return the command's output
     */
    String command(String shellCommand, int line);

    /** A short name for reports: {@code usnet (preset 6.x)} or {@code kernel 6.1.0}. */
    String describe();

    /** Removes everything {@link #open} created (namespace, device, threads), also after a failure. */
    @Override
    void close();
}
