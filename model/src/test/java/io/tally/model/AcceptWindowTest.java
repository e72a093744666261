package io.tally.model;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class AcceptWindowTest {
    static final long NOW = 1_800_000_000_000_000L;

    @Test
    void acceptsFromAcceptLimitBehindToTheSkewAhead() {
        Duration limit = Duration.ofSeconds(5);
        assertThat(AcceptWindow.accepts(limit, NOW - 5_000_000, NOW)).isTrue();
        assertThat(AcceptWindow.accepts(limit, NOW - 5_000_001, NOW)).isFalse();
        assertThat(AcceptWindow.accepts(limit, NOW + AcceptWindow.FUTURE_SKEW_MICROS, NOW))
                .isTrue();
        assertThat(AcceptWindow.accepts(limit, NOW + AcceptWindow.FUTURE_SKEW_MICROS + 1, NOW))
                .isFalse();
    }

    @Test
    void storesATimeSeriesEventUpToTheGraceBehindItsWindow() {
        Duration limit = Duration.ofSeconds(5);
        long edge = NOW - 5_000_000 - AcceptWindow.STORE_GRACE_MICROS;
        assertThat(AcceptWindow.storable(limit, edge, NOW)).isTrue();
        assertThat(AcceptWindow.storable(limit, edge - 1, NOW)).isFalse();
        assertThat(AcceptWindow.storable(limit, NOW + AcceptWindow.FUTURE_SKEW_MICROS, NOW))
                .isTrue();
        assertThat(AcceptWindow.storable(limit, NOW + AcceptWindow.FUTURE_SKEW_MICROS + 1, NOW))
                .isFalse();
        // what the gateway accepts on its clock stays storable when Kafka appends it up to the grace later
        long accepted = NOW - 5_000_000;
        assertThat(AcceptWindow.accepts(limit, accepted, NOW)).isTrue();
        assertThat(AcceptWindow.storable(limit, accepted, NOW + AcceptWindow.STORE_GRACE_MICROS))
                .isTrue();
    }

    @Test
    void microsRoundTripThroughInstant() {
        for (long t : new long[] {0, 1, -1, NOW + 999_999, -1_000_001}) {
            assertThat(Micros.of(Micros.toInstant(t))).isEqualTo(t);
        }
    }
}
