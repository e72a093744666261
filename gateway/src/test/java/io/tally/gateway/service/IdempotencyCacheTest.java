package io.tally.gateway.service;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.gateway.service.IdempotencyCache.Verdict;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;
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

    @Test
    void theOldestGoFirstAndTheNewestStay() {
        IdempotencyCache.Shard s = new IdempotencyCache.Shard(100);
        for (long k = 1; k <= 250; k++) {
            assertThat(s.checkAndRemember(k, k, 0, Long.MAX_VALUE)).isEqualTo(Verdict.NEW);
        }
        assertThat(s.size()).isEqualTo(100);
        for (long k = 151; k <= 250; k++) {
            assertThat(s.checkAndRemember(k, k, 0, Long.MAX_VALUE)).isEqualTo(Verdict.SAME_PAYLOAD);
        }
        assertThat(s.checkAndRemember(150, 150, 0, Long.MAX_VALUE))
                .as("evicted")
                .isEqualTo(Verdict.NEW);
    }

    @Test
    void aKeyForgottenAndRememberedAgainIsNotEvictedByItsOlderPlace() {
        IdempotencyCache.Shard s = new IdempotencyCache.Shard(3);
        s.checkAndRemember(1, 1, 0, Long.MAX_VALUE);
        s.remove(1);
        s.checkAndRemember(2, 2, 0, Long.MAX_VALUE);
        s.checkAndRemember(1, 9, 0, Long.MAX_VALUE); // the ring: 1 (stale), 2, 1
        s.checkAndRemember(3, 3, 0, Long.MAX_VALUE); // evicts the stale place only
        assertThat(s.checkAndRemember(1, 9, 0, Long.MAX_VALUE)).isEqualTo(Verdict.SAME_PAYLOAD);
        assertThat(s.checkAndRemember(2, 2, 0, Long.MAX_VALUE)).isEqualTo(Verdict.SAME_PAYLOAD);
        assertThat(s.size()).isEqualTo(3);
    }

    /**
     * Random remembers, forgets and expiries over few keys that collide often (a shard of 64 keys
     * in 128 slots), against the same rules kept with the JDK's collections.
     */
    @Test
    void agreesWithAModelOverRandomOperations() {
        Random rnd = new Random(42);
        int max = 64;
        IdempotencyCache.Shard s = new IdempotencyCache.Shard(max);
        Map<Long, long[]> live = new HashMap<>(); // key -> digest, expires, ring sequence
        ArrayDeque<long[]> ring = new ArrayDeque<>(); // key, sequence
        long seq = 0;
        for (int op = 0; op < 200_000; op++) {
            long key = rnd.nextInt(300) * 0x100000000L; // low bits equal: they all share one shard
            long now = op;
            if (rnd.nextInt(10) == 0) {
                s.remove(key);
                live.remove(key);
                continue;
            }
            long digest = rnd.nextInt(3);
            long expires = now + rnd.nextInt(2_000);
            long[] e = live.get(key);
            Verdict expected;
            if (e != null && e[1] >= now) {
                expected = e[0] == digest ? Verdict.SAME_PAYLOAD : Verdict.DIFFERENT_PAYLOAD;
            } else if (e != null) {
                e[0] = digest;
                e[1] = expires;
                expected = Verdict.NEW;
            } else {
                if (ring.size() == max) {
                    long[] oldest = ring.removeFirst();
                    long[] o = live.get(oldest[0]);
                    if (o != null && o[2] == oldest[1]) {
                        live.remove(oldest[0]);
                    }
                }
                ring.addLast(new long[] {key, seq});
                live.put(key, new long[] {digest, expires, seq++});
                expected = Verdict.NEW;
            }
            assertThat(s.checkAndRemember(key, digest, now, expires))
                    .as("operation %d", op)
                    .isEqualTo(expected);
            assertThat(s.size()).isEqualTo(live.size());
        }
    }
}
