package dev.usnet.tcp.app;

/**
 * One step of an MPI rank's iteration: either a compute phase (the rank stays idle for the job's compute time)
 * or a blocking exchange — MPI_Irecv from {@code recvFrom}, MPI_Send to {@code sendTo}, MPI_Wait — after which
 * the rank has sent {@code sendBytes} and received {@code recvBytes}. In a pairwise exchange (NAS CG's) the two
 * peers are the same rank; a shift (ring, alltoall) sends to one and receives from another.
 *
 * @param sendTo the rank sent to, or -1 for a compute phase (or a step that sends nothing)
 * @param sendBytes bytes sent to {@code sendTo}
 * @param recvFrom the rank received from, or -1 (nothing received)
 * @param recvBytes bytes received from {@code recvFrom}
 */
public record MpiStep(int sendTo, int sendBytes, int recvFrom, int recvBytes) {
    /** A compute phase. */
    public static final MpiStep COMPUTE = new MpiStep(-1, 0, -1, 0);

    public MpiStep {
        if (sendBytes < 0 || recvBytes < 0 || sendTo < 0 && sendBytes > 0 || recvFrom < 0 && recvBytes > 0) {
            throw new IllegalArgumentException("bad step " + sendTo + "/" + sendBytes + " " + recvFrom + "/" + recvBytes);
        }
    }

    /** MPI_Irecv + MPI_Send + MPI_Wait with one partner, {@code bytes} each way. */
    public static MpiStep exchange(int partner, int bytes) {
        return new MpiStep(partner, bytes, partner, bytes);
    }

    public boolean isCompute() {
        return sendTo < 0 && recvFrom < 0;
    }
}
