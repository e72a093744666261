package io.tally.model;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.model.cassandra.KeyLimits;
import org.junit.jupiter.api.Test;

class KeyLimitsTest {
    @Test
    void aKeyPartOverCassandrasLimitIsNamedWithItsSize() {
        String big = "x".repeat(KeyLimits.MAX_KEY_BYTES + 1);
        assertThat(KeyLimits.refusal("time_series_id", "p1", "event_id", big)).startsWith("event_id is 65536 bytes");
    }

    @Test
    void theLimitIsInBytesNotCharacters() {
        String exactly = "x".repeat(KeyLimits.MAX_KEY_BYTES);
        assertThat(KeyLimits.refusal("counter", exactly)).isNull();
        String wide = "\u00e9".repeat(KeyLimits.MAX_KEY_BYTES / 2 + 1); // 2 bytes each
        assertThat(KeyLimits.refusal("counter", wide)).contains("65536 bytes");
        assertThat(KeyLimits.refusal("counter", "\u00e9".repeat(30_000))).isNull();
    }
}
