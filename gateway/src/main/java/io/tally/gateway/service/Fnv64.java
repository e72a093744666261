package io.tally.gateway.service;

import java.nio.charset.StandardCharsets;

/**
 * 64-bit FNV-1a: the digests of idempotency keys and payloads (enough to tell a retry from a
 * reuse with other content) and of queries that page tokens are bound to.
 */
public final class Fnv64 {
    public static final long OFFSET = 0xcbf29ce484222325L;

    private Fnv64() {}

    public static long of(String s) {
        return add(OFFSET, s.getBytes(StandardCharsets.UTF_8));
    }

    /** The digest h continued over bytes. */
    public static long add(long h, byte[] bytes) {
        for (byte b : bytes) {
            h ^= (b & 0xff);
            h *= 0x100000001b3L;
        }
        return h;
    }
}
