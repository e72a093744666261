package io.tally.gateway;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Recently seen idempotency keys and a digest of their payloads, so the gateway can answer
 * 409 when a token comes back with a different payload. Bounded (oldest entries go first)
 * and time-limited: beyond the accept window a reused token is rejected by the window
 * anyway, and what this instance never saw is caught by Flink (IDEMPOTENCY_KEY_REUSE).
 */
public final class IdempotencyCache {
    /** What the cache says of a key. */
    public enum Verdict { NEW, SAME_PAYLOAD, DIFFERENT_PAYLOAD }

    private record Entry(long digest, long expiresAtMillis) {}

    private final int maxEntries;
    private final LinkedHashMap<String, Entry> entries;

    public IdempotencyCache(int maxEntries) {
        this.maxEntries = maxEntries;
        this.entries = new LinkedHashMap<>(1024, 0.75f, false) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<String, Entry> eldest) {
                return size() > IdempotencyCache.this.maxEntries;
            }
        };
    }

    public synchronized Verdict check(String key, long digest, long nowMillis) {
        Entry e = entries.get(key);
        if (e == null || e.expiresAtMillis() < nowMillis) {
            return Verdict.NEW;
        }
        return e.digest() == digest ? Verdict.SAME_PAYLOAD : Verdict.DIFFERENT_PAYLOAD;
    }

    public synchronized void remember(String key, long digest, long expiresAtMillis) {
        entries.put(key, new Entry(digest, expiresAtMillis));
    }

    public synchronized void forget(String key) {
        entries.remove(key);
    }

    public synchronized int size() {
        return entries.size();
    }
}
