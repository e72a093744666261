package io.tally.serde;

import java.nio.ByteBuffer;

/**
 * The Confluent wire format: magic byte 0, a 4-byte big-endian schema id, then the Avro
 * binary encoding of the record. Any Confluent-compatible client reads and writes it.
 */
public final class WireFormat {
    public static final byte MAGIC = 0;
    public static final int HEADER_SIZE = 5;

    private WireFormat() {}

    /** The schema id of a framed payload, after checking the frame. */
    public static int schemaId(byte[] data) {
        if (data == null) {
            throw new SerdeException("no payload (null value; a tombstone is not an Avro record)");
        }
        if (data.length < HEADER_SIZE) {
            throw new SerdeException(
                    "payload of " + data.length + " bytes is shorter than the 5-byte Confluent header");
        }
        if (data[0] != MAGIC) {
            throw new SerdeException(String.format(
                    "unknown magic byte 0x%02x (expected 0x00: not Confluent wire format)", data[0] & 0xff));
        }
        return ByteBuffer.wrap(data, 1, 4).getInt();
    }

    /** Writes the header for schemaId into the first 5 bytes of out. */
    public static void writeHeader(byte[] out, int schemaId) {
        out[0] = MAGIC;
        out[1] = (byte) (schemaId >>> 24);
        out[2] = (byte) (schemaId >>> 16);
        out[3] = (byte) (schemaId >>> 8);
        out[4] = (byte) schemaId;
    }
}
