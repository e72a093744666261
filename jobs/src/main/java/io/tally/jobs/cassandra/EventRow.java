package io.tally.jobs.cassandra;

/**
 * One row of a slice table: an event item at its place (docs/design.md, "Storage").
 * (event_time, event_id, event_item_key) is the idempotency key, so writing a row twice is an
 * identical upsert. An event without items is stored as one row with item key "".
 */
public class EventRow {
    public String keyspace;
    public String table;
    public String namespace;
    /** When the namespace was created (0: unknown): its tables' ids derive from it (TableIds). */
    public long namespaceCreatedMicros;

    public long sliceStartMicros;
    public long sliceEndMicros;
    public String timeSeriesId;
    public int timeBucket;
    public int eventBucket;
    public long eventTimeMicros;
    public String eventId;
    public String itemKey;
    public byte[] itemValue;

    public EventRow() {}
}
