package io.tally.registry;

/** The ordered log the registry writes to and reads its state from (Kafka's _schemas in production). */
public interface SchemaLog {
    /** Waits until this instance has applied every record appended before the call. */
    void syncToEnd() throws Exception;

    /** Appends a record (value null = tombstone) and waits until this instance has applied it. */
    long append(String key, String value) throws Exception;
}
