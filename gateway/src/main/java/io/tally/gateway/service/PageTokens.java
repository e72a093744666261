package io.tally.gateway.service;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.Base64;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Opaque, tamper-evident page tokens: the cursor (event_time, event_id, events returned so
 * far) plus a digest of the query, signed with HMAC-SHA256. A token that was altered, or that
 * belongs to another query, is refused (400 INVALID_PAGE_TOKEN).
 */
public final class PageTokens {
    /** Where the next page starts: after (eventTime, eventId) in newest-first order. */
    public record Cursor(long eventTimeMicros, String eventId, long returned) {}

    private static final String ALGORITHM = "HmacSHA256";

    /**
     * A keyed Mac a thread: looking one up and keying it for every token was 12% of a read worker's
     * samples under a first page's load, and a Mac is not safe to share (doFinal resets it for reuse).
     */
    private final ThreadLocal<Mac> macs;

    public PageTokens(String secret) {
        byte[] key;
        if (secret == null || secret.isEmpty()) {
            key = new byte[32];
            new SecureRandom().nextBytes(key);
        } else {
            key = secret.getBytes(StandardCharsets.UTF_8);
        }
        SecretKeySpec spec = new SecretKeySpec(key, ALGORITHM);
        macs = ThreadLocal.withInitial(() -> keyed(spec));
    }

    public String encode(Cursor c, long queryDigest) {
        byte[] id = c.eventId().getBytes(StandardCharsets.UTF_8);
        ByteBuffer b = ByteBuffer.allocate(8 + 8 + 8 + 4 + id.length);
        b.putLong(queryDigest)
                .putLong(c.eventTimeMicros())
                .putLong(c.returned())
                .putInt(id.length)
                .put(id);
        byte[] body = b.array();
        return b64(body) + "." + b64(mac(body));
    }

    public Cursor decode(String token, long queryDigest) {
        int dot = token.indexOf('.');
        try {
            if (dot < 0) {
                throw new IllegalArgumentException();
            }
            byte[] body = Base64.getUrlDecoder().decode(token.substring(0, dot));
            byte[] sig = Base64.getUrlDecoder().decode(token.substring(dot + 1));
            if (!MessageDigest.isEqual(sig, mac(body))) {
                throw new IllegalArgumentException();
            }
            ByteBuffer b = ByteBuffer.wrap(body);
            if (b.getLong() != queryDigest) {
                throw new ServiceException(
                        ErrorCode.INVALID_PAGE_TOKEN, "the pageToken belongs to another query", "pageToken");
            }
            long time = b.getLong();
            long returned = b.getLong();
            byte[] id = new byte[b.getInt()];
            b.get(id);
            return new Cursor(time, new String(id, StandardCharsets.UTF_8), returned);
        } catch (ServiceException e) {
            throw e;
        } catch (RuntimeException e) {
            throw new ServiceException(
                    ErrorCode.INVALID_PAGE_TOKEN, "the pageToken is not one this service issued", "pageToken");
        }
    }

    private byte[] mac(byte[] body) {
        return macs.get().doFinal(body);
    }

    private static Mac keyed(SecretKeySpec spec) {
        try {
            Mac mac = Mac.getInstance(ALGORITHM);
            mac.init(spec);
            return mac;
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    private static String b64(byte[] b) {
        return Base64.getUrlEncoder().withoutPadding().encodeToString(b);
    }
}
