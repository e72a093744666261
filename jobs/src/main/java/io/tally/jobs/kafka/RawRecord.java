package io.tally.jobs.kafka;

/** A Kafka record as it arrived, undecoded: what a dead letter carries back. */
public class RawRecord {
    public String topic;
    public int partition;
    public long offset;
    public long timestampMillis;
    public byte[] key;
    public byte[] value;
    /** The namespace version the gateway accepted it under (its header); 0 when absent (a direct producer). */
    public long namespaceVersion;
    /**
     * When the namespace the gateway accepted it under was created (its header); 0 when absent.
     * The decode step tells a deleted namespace's records from a new one's by it.
     */
    public long namespaceCreatedMicros;

    public RawRecord() {}

    public RawRecord(String topic, int partition, long offset, long timestampMillis, byte[] key, byte[] value) {
        this.topic = topic;
        this.partition = partition;
        this.offset = offset;
        this.timestampMillis = timestampMillis;
        this.key = key;
        this.value = value;
    }
}
