package io.tally.jobs.counter;

import io.tally.jobs.kafka.RawRecord;
import org.apache.flink.api.common.typeinfo.TypeInfo;

/**
 * A decoded, accepted-window CounterEvent on its way to dedup and rollup; it crosses the keyBy in
 * {@link CounterMutationSerializer}'s format. Every field added here must be added there.
 */
@TypeInfo(CounterMutationTypeInfo.class)
public class CounterMutation {
    public String namespace;
    public String counter;
    public boolean clear;
    /** A RECOUNT: delta is the event log's count before eventTimeMicros (a rollup time). */
    public boolean recount;

    public long delta;
    public long eventTimeMicros;
    public String eventId;
    public boolean bestEffort;
    /** ACCURATE: the live total (rollup plus pending) is published for the gateways' view. */
    public boolean accurate;
    // Its namespace's config when it was decoded (the rollup steps keep no catalog of their own).
    public long acceptLimitMs;
    public long coalesceMs;
    public long clockSkewMs;
    /** When its namespace was created (0: unknown): a counter of a re-created namespace starts anew. */
    public long namespaceCreatedMicros;
    // where its event-log row goes (placed by the decoder, with the namespace's partition history)
    public String table;
    public long sliceStartMicros;
    public long sliceEndMicros;
    public int timeBucket;
    public int eventBucket;
    public long deleteAfterSeconds;
    /** The Kafka record it came from: what a dead letter carries. */
    public RawRecord raw;

    public CounterMutation() {}

    /**
     * Whether this mutation is of a namespace created after the one a counter's state was kept for
     * (deleted and created again under its name): the state is another counter's. A state that
     * does not know its namespace's creation (0: an earlier release) is taken as this one's.
     */
    public boolean ofLaterNamespaceThan(long stateNamespaceCreatedMicros) {
        return stateNamespaceCreatedMicros != 0 && namespaceCreatedMicros > stateNamespaceCreatedMicros;
    }

    public String key() {
        return namespace + "/" + counter;
    }

    /** What must match when an idempotency key is seen again. */
    public String payload() {
        return (clear ? "CLEAR" : "ADD") + "|" + delta;
    }
}
