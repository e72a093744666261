package io.tally.model.cassandra;

import java.nio.charset.StandardCharsets;

/**
 * What Cassandra refuses in a row for what it is, checked before the row is written: a partition
 * key or clustering value longer than 65,535 bytes ("Key length ... is longer than maximum of
 * 65535"). The gateway's id limits keep its writes far below; a record produced straight to
 * Kafka may not be, and a refused row would fail the writer on every restart, so the jobs check
 * first and dead-letter the event (ROW_REJECTED) instead.
 */
public final class KeyLimits {
    /** The longest partition key component or clustering value Cassandra stores, in bytes. */
    public static final int MAX_KEY_BYTES = 65_535;

    private KeyLimits() {}

    /**
     * Why Cassandra would refuse a key made of these values (each named by its field), or null.
     *
     * @param fieldsAndValues field name, value, field name, value, ...
     */
    public static String refusal(String... fieldsAndValues) {
        for (int i = 0; i + 1 < fieldsAndValues.length; i += 2) {
            String v = fieldsAndValues[i + 1];
            // a char is at most 3 UTF-8 bytes: most values need no encoding to be judged
            if (v != null && v.length() * 3L > MAX_KEY_BYTES) {
                int bytes = v.getBytes(StandardCharsets.UTF_8).length;
                if (bytes > MAX_KEY_BYTES) {
                    return fieldsAndValues[i] + " is " + bytes
                            + " bytes in UTF-8; Cassandra stores a key part of at most " + MAX_KEY_BYTES;
                }
            }
        }
        return null;
    }
}
