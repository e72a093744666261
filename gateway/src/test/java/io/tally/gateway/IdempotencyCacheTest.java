package io.tally.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.gateway.IdempotencyCache.Verdict;
import org.junit.jupiter.api.Test;

class IdempotencyCacheTest {
    @Test
    void retriesAreSameAndReusesAreDifferent() {
        IdempotencyCache c = new IdempotencyCache(10);
        assertThat(c.check("k", 1, 0)).isEqualTo(Verdict.NEW);
        c.remember("k", 1, 100);
        assertThat(c.check("k", 1, 50)).isEqualTo(Verdict.SAME_PAYLOAD);
        assertThat(c.check("k", 2, 50)).isEqualTo(Verdict.DIFFERENT_PAYLOAD);
        assertThat(c.check("k", 2, 101)).as("expired").isEqualTo(Verdict.NEW);
        c.forget("k");
        assertThat(c.check("k", 2, 50)).isEqualTo(Verdict.NEW);
    }

    @Test
    void boundedByEntries() {
        IdempotencyCache c = new IdempotencyCache(3);
        for (int i = 0; i < 10; i++) {
            c.remember("k" + i, i, Long.MAX_VALUE);
        }
        assertThat(c.size()).isEqualTo(3);
        assertThat(c.check("k0", 0, 0)).isEqualTo(Verdict.NEW);
        assertThat(c.check("k9", 9, 0)).isEqualTo(Verdict.SAME_PAYLOAD);
    }
}
