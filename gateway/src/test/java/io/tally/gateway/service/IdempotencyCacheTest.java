package io.tally.gateway.service;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.gateway.service.IdempotencyCache.Verdict;
import org.junit.jupiter.api.Test;

class IdempotencyCacheTest {
    @Test
    void retriesAreSameAndReusesAreDifferent() {
        IdempotencyCache c = new IdempotencyCache(160);
        assertThat(c.checkAndRemember(7, 1, 0, 100)).isEqualTo(Verdict.NEW);
        assertThat(c.checkAndRemember(7, 1, 50, 100)).isEqualTo(Verdict.SAME_PAYLOAD);
        assertThat(c.checkAndRemember(7, 2, 50, 100)).isEqualTo(Verdict.DIFFERENT_PAYLOAD);
        assertThat(c.checkAndRemember(7, 2, 101, 200)).as("expired: new again").isEqualTo(Verdict.NEW);
        c.forget(7);
        assertThat(c.checkAndRemember(7, 3, 50, 100)).isEqualTo(Verdict.NEW);
    }

    @Test
    void boundedByEntries() {
        IdempotencyCache c = new IdempotencyCache(32);
        for (long k = 0; k < 10_000; k++) {
            c.checkAndRemember(k * 0x9E3779B97F4A7C15L, k, 0, Long.MAX_VALUE);
        }
        assertThat(c.size()).isLessThanOrEqualTo(32);
        assertThat(c.checkAndRemember(9_999 * 0x9E3779B97F4A7C15L, 9_999, 0, Long.MAX_VALUE))
                .isEqualTo(Verdict.SAME_PAYLOAD);
    }
}
