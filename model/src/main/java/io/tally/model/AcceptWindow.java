package io.tally.model;

import java.time.Duration;

/**
 * The accept window (docs/design.md, "Accept window"): an event is accepted when its time is
 * at most accept_limit behind the reference clock and at most {@link #FUTURE_SKEW} ahead of it.
 * The gateway judges it on its clock; the jobs on the Kafka record's timestamp. Both use this
 * one rule with the same skew, so nothing the gateway accepts is refused later for the skew.
 */
public final class AcceptWindow {
    /** How far ahead of the reference clock an event time may be. */
    public static final Duration FUTURE_SKEW = Duration.ofSeconds(5);

    public static final long FUTURE_SKEW_MICROS = FUTURE_SKEW.toNanos() / 1000;

    /**
     * How long after its window a time-series event may still be stored. Its topic carries the
     * broker's clock (LogAppendTime), which runs behind the gateway's accept by the time the
     * producer took to deliver: at most the gateway's delivery.timeout.ms (30 s by default), after
     * which the producer gives the record up. So an event the gateway accepted is never refused
     * for lateness once delivered, and what lies behind the window plus this grace is final (the
     * read cache of {@code StoredHorizon} relies on that).
     */
    public static final Duration STORE_GRACE = Duration.ofSeconds(30);

    public static final long STORE_GRACE_MICROS = STORE_GRACE.toNanos() / 1000;

    private AcceptWindow() {}

    /** @return whether an event at eventMicros is inside the window around referenceMicros */
    public static boolean accepts(Duration acceptLimit, long eventMicros, long referenceMicros) {
        return eventMicros >= referenceMicros - acceptLimit.toNanos() / 1000
                && eventMicros <= referenceMicros + FUTURE_SKEW_MICROS;
    }

    /**
     * Whether a time-series event at eventMicros is stored when Kafka appended it at storedMicros:
     * the accept window around the append time, widened into the past by {@link #STORE_GRACE}.
     */
    public static boolean storable(Duration acceptLimit, long eventMicros, long storedMicros) {
        return eventMicros >= storedMicros - acceptLimit.toNanos() / 1000 - STORE_GRACE_MICROS
                && eventMicros <= storedMicros + FUTURE_SKEW_MICROS;
    }
}
