package io.tally.gateway.service;

import io.tally.model.AcceptWindow;
import io.tally.namespace.NamespaceConfig;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How far back a namespace's stored events are final. The TimeSeries topic carries the broker's
 * clock (LogAppendTime) and the writer stores an event only within its namespace's accept_limit
 * plus {@link AcceptWindow#STORE_GRACE} of that clock, so once the writer has stored every record
 * appended before T, no event older than T - accept_limit - grace can ever be added: reads below
 * that line may be served from memory ({@link ClosedPageCache}).
 *
 * <p>The writer's progress is asked of Kafka ({@link Probe}) on a thread of its own, at most once a
 * refresh period and only while reads ask for it, so an idle gateway asks nothing; until the first
 * answer, and whenever an answer fails, nothing counts as final.
 */
public final class StoredHorizon implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(StoredHorizon.class);

    /** Where the writer is: the broker time before which every appended record is stored. */
    public interface Probe extends AutoCloseable {
        /**
         * @return ms since the epoch on the broker's clock before which every record of the topic
         *     is stored, or {@link Long#MIN_VALUE} when that cannot be told (no committed offsets,
         *     records not on the broker's clock)
         */
        long storedBeforeMillis() throws Exception;

        @Override
        default void close() {}
    }

    /** Never final: a gateway without the probe (the cache off). */
    public static final StoredHorizon NONE = new StoredHorizon(null, 0, 0, System::nanoTime);

    private final Probe probe;
    private final long refreshNanos;
    private final long skewMillis;
    private final LongSupplier nanoClock;
    private final ExecutorService thread;
    private final AtomicBoolean probing = new AtomicBoolean();
    private volatile long storedBeforeMillis = Long.MIN_VALUE;
    private volatile long askedAtNanos;

    /**
     * @param refreshMillis how stale the writer's progress may be before a read asks again
     * @param skewMillis how far the broker's clock may run behind the gateway's (subtracted)
     */
    public StoredHorizon(Probe probe, long refreshMillis, long skewMillis, LongSupplier nanoClock) {
        this.probe = probe;
        this.refreshNanos = refreshMillis * 1_000_000L;
        this.skewMillis = skewMillis;
        this.nanoClock = nanoClock;
        this.askedAtNanos = nanoClock.getAsLong() - refreshNanos - 1;
        this.thread = probe == null
                ? null
                : Executors.newSingleThreadExecutor(r -> {
                    Thread t = new Thread(r, "stored-horizon");
                    t.setDaemon(true);
                    return t;
                });
    }

    /**
     * Events of the namespace with an event time below this (µs) are final: stored, and nothing
     * will be added among them. {@link Long#MIN_VALUE} when nothing is known to be.
     */
    public long finalBeforeMicros(NamespaceConfig ns) {
        if (probe == null) {
            return Long.MIN_VALUE;
        }
        refreshIfStale();
        return finalBefore(storedBeforeMillis, skewMillis, ns.acceptLimit().toNanos() / 1000);
    }

    /** The line for a writer stored up to storedBeforeMillis: its window and the grace behind it. */
    static long finalBefore(long storedBeforeMillis, long skewMillis, long acceptLimitMicros) {
        if (storedBeforeMillis == Long.MIN_VALUE) {
            return Long.MIN_VALUE;
        }
        return (storedBeforeMillis - skewMillis) * 1000 - acceptLimitMicros - AcceptWindow.STORE_GRACE_MICROS;
    }

    private void refreshIfStale() {
        if (nanoClock.getAsLong() - askedAtNanos <= refreshNanos || !probing.compareAndSet(false, true)) {
            return;
        }
        askedAtNanos = nanoClock.getAsLong();
        try {
            thread.execute(() -> {
                try {
                    long through = probe.storedBeforeMillis();
                    // the writer's progress only grows; a smaller answer (a job restored from an
                    // older checkpoint re-stores what it had stored) does not undo what was final
                    if (through > storedBeforeMillis) {
                        storedBeforeMillis = through;
                    }
                } catch (Exception e) {
                    LOG.debug("the writer's progress could not be read: {}", e.toString());
                } finally {
                    probing.set(false);
                }
            });
        } catch (RuntimeException e) { // shut down
            probing.set(false);
        }
    }

    @Override
    public void close() {
        if (thread != null) {
            thread.shutdownNow();
        }
        if (probe != null) {
            try {
                probe.close();
            } catch (Exception e) {
                LOG.debug("closing the writer's progress probe: {}", e.toString());
            }
        }
    }
}
