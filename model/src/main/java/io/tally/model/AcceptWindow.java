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

    private AcceptWindow() {}

    /** @return whether an event at eventMicros is inside the window around referenceMicros */
    public static boolean accepts(Duration acceptLimit, long eventMicros, long referenceMicros) {
        return eventMicros >= referenceMicros - acceptLimit.toNanos() / 1000
                && eventMicros <= referenceMicros + FUTURE_SKEW_MICROS;
    }
}
