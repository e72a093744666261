package io.tally.model;

import java.time.Instant;

/**
 * Event times are microseconds since the epoch everywhere in Tally (Avro timestamp-micros, the
 * slice tables' bigint event_time, the idempotency key); generated records hold them as Instant.
 */
public final class Micros {
    private Micros() {}

    public static long of(Instant t) {
        return Math.addExact(Math.multiplyExact(t.getEpochSecond(), 1_000_000L), t.getNano() / 1000);
    }

    public static Instant toInstant(long micros) {
        return Instant.ofEpochSecond(Math.floorDiv(micros, 1_000_000L), Math.floorMod(micros, 1_000_000L) * 1000);
    }
}
