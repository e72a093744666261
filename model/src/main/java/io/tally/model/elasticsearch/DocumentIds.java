package io.tally.model.elasticsearch;

import io.tally.model.KeyParts;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * The Elasticsearch _id of an event's document: {@code <time series id>/<event time us>/<event
 * id>} joined by {@link KeyParts}, one-to-one with the event's key so a replay overwrites the
 * same document and two events never share one; an id longer than Elasticsearch's 512-byte
 * limit becomes the SHA-256 of that form.
 */
public final class DocumentIds {
    /** Elasticsearch refuses a longer _id. */
    public static final int MAX_BYTES = 512;

    private DocumentIds() {}

    public static String of(String timeSeriesId, long eventTimeMicros, String eventId) {
        String id = KeyParts.join(timeSeriesId, eventTimeMicros, eventId);
        byte[] utf8 = id.getBytes(StandardCharsets.UTF_8);
        if (utf8.length <= MAX_BYTES) {
            return id;
        }
        try {
            // A plain id holds two '/' at least; a digest id holds none, so the two never meet.
            return "sha256:"
                    + HexFormat.of()
                            .formatHex(MessageDigest.getInstance("SHA-256").digest(utf8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is part of every JVM", e);
        }
    }
}
