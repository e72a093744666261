package io.tally.gateway.service;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Recently seen idempotency keys and a digest of their payloads, so the gateway can answer
 * 409 when a token comes back with a different payload. Bounded (oldest entries go first)
 * and time-limited: beyond the accept window a reused token is rejected by the window
 * anyway, and what this instance never saw is caught by Flink (IDEMPOTENCY_KEY_REUSE).
 *
 * <p>Keys are 64-bit digests of the idempotency key and the map is split into lock-striped
 * shards, so the hot path hashes no strings and event loops rarely wait on each other. (Two
 * different keys with one 64-bit digest and different payloads would be a false 409: about
 * one chance in 10^11 among a million live keys.)
 */
public final class IdempotencyCache {
    /** What the cache says of a key. */
    public enum Verdict {
        NEW,
        SAME_PAYLOAD,
        DIFFERENT_PAYLOAD
    }

    private static final int SHARDS = 16;

    private record Entry(long digest, long expiresAtMillis) {}

    private final Shard[] shards = new Shard[SHARDS];

    private static final class Shard extends LinkedHashMap<Long, Entry> {
        private final int max;

        Shard(int max) {
            super(256, 0.75f, false);
            this.max = max;
        }

        @Override
        protected boolean removeEldestEntry(Map.Entry<Long, Entry> eldest) {
            return size() > max;
        }
    }

    public IdempotencyCache(int maxEntries) {
        for (int i = 0; i < SHARDS; i++) {
            shards[i] = new Shard(Math.max(1, maxEntries / SHARDS));
        }
    }

    private Shard shard(long key) {
        return shards[(int) ((key ^ (key >>> 32)) & (SHARDS - 1))];
    }

    /** Checks key and, when it is new (or expired), remembers it with this payload. */
    public Verdict checkAndRemember(long key, long digest, long nowMillis, long expiresAtMillis) {
        Shard s = shard(key);
        synchronized (s) {
            Entry e = s.get(key);
            if (e == null || e.expiresAtMillis() < nowMillis) {
                s.put(key, new Entry(digest, expiresAtMillis));
                return Verdict.NEW;
            }
            return e.digest() == digest ? Verdict.SAME_PAYLOAD : Verdict.DIFFERENT_PAYLOAD;
        }
    }

    public void forget(long key) {
        Shard s = shard(key);
        synchronized (s) {
            s.remove(key);
        }
    }

    public int size() {
        int n = 0;
        for (Shard s : shards) {
            synchronized (s) {
                n += s.size();
            }
        }
        return n;
    }
}
