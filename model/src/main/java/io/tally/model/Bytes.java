package io.tally.model;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * The bytes of a ByteBuffer (an Avro bytes field, a Cassandra blob) from its position to its
 * limit, copied without moving it: those buffers are shared, and a second read must see them
 * whole.
 */
public final class Bytes {
    private Bytes() {}

    /** A copy of what the buffer holds; empty for null (a blob column that was never written). */
    public static byte[] of(ByteBuffer buffer) {
        if (buffer == null) {
            return new byte[0];
        }
        byte[] out = new byte[buffer.remaining()];
        buffer.duplicate().get(out);
        return out;
    }

    /** What the buffer holds, as UTF-8 text (event item values are text for the jobs that read them). */
    public static String utf8(ByteBuffer buffer) {
        return new String(of(buffer), StandardCharsets.UTF_8);
    }
}
