package dev.usnet.core.time;

/**
 * A unit of receive work a scheduler runs when asked ({@link Scheduler#napiSchedule}), napi_struct's part that
 * the poll list sees: a namespace's receive backlog is one. Its run handles a budget of work and asks to be
 * scheduled again when some is left. It is on at most one poll list at a time: whoever schedules it makes sure
 * it is not already scheduled (the backlog's "scheduled" flag, as NAPI_STATE_SCHED).
 */
public abstract class Napi implements Runnable {
    // The next entry on a Softnet's poll list; written by the thread that schedules it, read by the loop that
    // takes the list (which publishes it through the list's head).
    Napi pollNext;
}
