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
    void microsRoundTripThroughInstant() {
        for (long t : new long[] {0, 1, -1, NOW + 999_999, -1_000_001}) {
            assertThat(Micros.of(Micros.toInstant(t))).isEqualTo(t);
        }
    }
}
