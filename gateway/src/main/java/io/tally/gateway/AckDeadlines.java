package io.tally.gateway;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeoutException;
import java.util.function.LongSupplier;

/**
 * The deadlines of the durable writes one event loop took, kept with one timer at a time instead
 * of one a write. A timer a write left about 5,000 pending on each loop at 1,000 writes a second,
 * each firing on a long-answered write 5 s later: a wake-up of the loop a write (epoll_pwait2, the
 * loop sleeping and waking, was 14% of the gateway's samples under AddCount; keeping the one timer
 * off the loop so that its waits were untimed saved nothing: the wake-ups were the cost). Writes with
 * the same timeout are answered in about the order they were made, so each timeout keeps a FIFO
 * whose head is its earliest open deadline; the one timer is set for the earliest head.
 *
 * <p>Not thread-safe: used only on the event loop it belongs to (timers fire there too).
 */
final class AckDeadlines {
    /** Sets and cancels a one-shot timer on the owning event loop. */
    interface Timers {
        long set(long delayMs, Runnable task);

        void cancel(long id);
    }

    private record Pending(long deadlineMs, CompletableFuture<?> acks) {}

    private final Timers timers;
    private final LongSupplier clockMs;
    private final Map<Long, ArrayDeque<Pending>> byTimeout = new HashMap<>(4);
    private long timer = -1;
    private long timerAtMs = Long.MAX_VALUE;

    AckDeadlines(Timers timers, LongSupplier clockMs) {
        this.timers = timers;
        this.clockMs = clockMs;
    }

    /** `acks` fails with a {@link TimeoutException} if it is not done `ms` from now. */
    void arm(CompletableFuture<?> acks, long ms) {
        long now = clockMs.getAsLong();
        ArrayDeque<Pending> queue = byTimeout.computeIfAbsent(ms, k -> new ArrayDeque<>());
        while (!queue.isEmpty() && queue.peekFirst().acks().isDone()) { // answered: keeps the queue short
            queue.pollFirst();
        }
        queue.addLast(new Pending(now + ms, acks));
        if (now + ms < timerAtMs) {
            schedule(now + ms, now);
        }
    }

    /** The writes still queued, answered or not (for tests). */
    int pending() {
        return byTimeout.values().stream().mapToInt(ArrayDeque::size).sum();
    }

    private void sweep() {
        timer = -1;
        timerAtMs = Long.MAX_VALUE;
        long now = clockMs.getAsLong();
        long next = Long.MAX_VALUE;
        List<CompletableFuture<?>> late = new ArrayList<>();
        for (ArrayDeque<Pending> queue : byTimeout.values()) {
            while (!queue.isEmpty()) {
                Pending head = queue.peekFirst();
                if (!head.acks().isDone() && head.deadlineMs() > now) {
                    next = Math.min(next, head.deadlineMs());
                    break;
                }
                queue.pollFirst();
                if (!head.acks().isDone()) {
                    late.add(head.acks());
                }
            }
        }
        byTimeout.values().removeIf(ArrayDeque::isEmpty);
        if (next != Long.MAX_VALUE) {
            schedule(next, now);
        }
        // after the queues are settled: failing a write runs its callbacks, which may write again
        for (CompletableFuture<?> acks : late) {
            acks.completeExceptionally(new TimeoutException());
        }
    }

    private void schedule(long atMs, long now) {
        if (timer >= 0) {
            timers.cancel(timer);
        }
        timerAtMs = atMs;
        timer = timers.set(Math.max(1, atMs - now), this::sweep);
    }
}
