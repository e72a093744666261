package io.tally.gateway.service;

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
 *
 * <p>Each shard is a table of primitive arrays made once (open addressing, linear probing) with a
 * ring of keys in the order they came. A key lives for its accept window plus a minute (and stays
 * until the bound pushes it out), so with objects per entry (a LinkedHashMap's node, a boxed key, a
 * value) every young collection copied them again: under 1,000 durable AddCount/s the survivors
 * grew to 18-27 MB and the pauses averaged 37-48 ms; with the arrays, 6 MB and 8-11 ms
 * (docs/performance-log.md, "The gateway's young collections").
 */
public final class IdempotencyCache {
    /** What the cache says of a key. */
    public enum Verdict {
        NEW,
        SAME_PAYLOAD,
        DIFFERENT_PAYLOAD
    }

    private static final int SHARDS = 16;

    private final Shard[] shards = new Shard[SHARDS];

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
            return s.checkAndRemember(key, digest, nowMillis, expiresAtMillis);
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
                n += s.size;
            }
        }
        return n;
    }

    /**
     * One shard: at most `max` keys in a table at most half full. The ring holds keys in the order
     * they were first remembered; each table slot notes its key's place in the ring, so a key
     * forgotten and remembered again is not evicted by its older place.
     */
    static final class Shard {
        private final int max;
        private final int mask;
        private final int shift;
        private final long[] keys;
        private final long[] digests;
        private final long[] expires;
        private final int[] ringPlace;
        private final boolean[] used;
        private final long[] ring;
        private int ringHead;
        private int ringCount;
        private int size;

        Shard(int max) {
            this.max = max;
            int slots = Integer.highestOneBit(Math.max(8, max) * 2 - 1) << 1; // a power of two >= 2 * max
            this.mask = slots - 1;
            this.shift = 64 - Integer.numberOfTrailingZeros(slots);
            keys = new long[slots];
            digests = new long[slots];
            expires = new long[slots];
            ringPlace = new int[slots];
            used = new boolean[slots];
            ring = new long[max];
        }

        /** Fibonacci hashing: the shard was chosen by the key's low bits, the slot by its high ones. */
        private int home(long key) {
            return (int) ((key * 0x9E3779B97F4A7C15L) >>> shift);
        }

        private int find(long key) {
            for (int i = home(key); used[i]; i = (i + 1) & mask) {
                if (keys[i] == key) {
                    return i;
                }
            }
            return -1;
        }

        Verdict checkAndRemember(long key, long digest, long nowMillis, long expiresAtMillis) {
            int at = find(key);
            if (at >= 0 && expires[at] >= nowMillis) {
                return digests[at] == digest ? Verdict.SAME_PAYLOAD : Verdict.DIFFERENT_PAYLOAD;
            }
            if (at >= 0) { // expired: the key takes its new payload and keeps its place in the ring
                digests[at] = digest;
                expires[at] = expiresAtMillis;
                return Verdict.NEW;
            }
            if (ringCount == max) {
                evictOldest();
            }
            int place = (ringHead + ringCount) % max;
            ring[place] = key;
            ringCount++;
            int i = home(key);
            while (used[i]) {
                i = (i + 1) & mask;
            }
            used[i] = true;
            keys[i] = key;
            digests[i] = digest;
            expires[i] = expiresAtMillis;
            ringPlace[i] = place;
            size++;
            return Verdict.NEW;
        }

        private void evictOldest() {
            long key = ring[ringHead];
            int at = find(key);
            if (at >= 0 && ringPlace[at] == ringHead) {
                removeAt(at);
            } // else forgotten since (and perhaps remembered again, later in the ring)
            ringHead = (ringHead + 1) % max;
            ringCount--;
        }

        void remove(long key) {
            int at = find(key);
            if (at >= 0) {
                removeAt(at);
            }
        }

        /** Linear probing's deletion: later keys of the run move back so no lookup stops short. */
        private void removeAt(int hole) {
            int j = hole;
            while (true) {
                j = (j + 1) & mask;
                if (!used[j]) {
                    break;
                }
                int h = home(keys[j]);
                // the key at j may fill the hole unless its home lies cyclically in (hole, j]
                boolean staysPut = hole <= j ? (hole < h && h <= j) : (hole < h || h <= j);
                if (!staysPut) {
                    keys[hole] = keys[j];
                    digests[hole] = digests[j];
                    expires[hole] = expires[j];
                    ringPlace[hole] = ringPlace[j];
                    hole = j;
                }
            }
            used[hole] = false;
            size--;
        }

        int size() {
            return size;
        }
    }
}
