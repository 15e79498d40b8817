package dev.usnet.core.time;

/** A pending timer; cancelling one that already ran does nothing. */
public interface Timeout {
    void cancel();

    boolean isPending();
}
