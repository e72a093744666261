package io.tally.namespace;

import java.time.Duration;
import java.util.Map;

/**
 * A namespace's configuration (docs/design.md, keys after the Counter and TimeSeries
 * articles). Immutable; made by {@link NamespaceConfigParser}, which validates every key.
 */
public record NamespaceConfig(
        String name,
        Kind kind,
        CounterType counterType, // counters only, else null
        TimePartition timePartition,
        Duration acceptLimit,
        Retention retention,
        Index index, // never null; disabled when absent
        Rollup rollup, // counters only, else null
        java.util.List<EarlierPartition> partitionHistory) { // oldest first; empty when time_partition never changed

    public enum Kind {
        TIMESERIES,
        COUNTER
    }

    public enum CounterType {
        /** Last rollup; idempotent; durable. */
        EVENTUAL,
        /** Last rollup plus the stored delta since; idempotent; durable. */
        ACCURATE,
        /** Processing-time aggregation: no dedup, no event log. */
        BEST_EFFORT;

        /** Durable types need an idempotency token and are acknowledged after Kafka's ack. */
        public boolean durable() {
            return this != BEST_EFFORT;
        }
    }

    /**
     * How a time bucket's events are spread over its buckets_per_id partitions (config key
     * time_partition.event_buckets_by).
     */
    public enum EventBuckets {
        /** By a hash of the event id: a burst at one instant spreads over every partition (the default). */
        EVENT_ID,
        /**
         * By event time: the time bucket is cut into buckets_per_id equal, consecutive ranges, one a
         * partition (the TimeSeries article: an event lands in its event bucket "as a factor of the
         * event_time"). A read newest first then asks one partition after another and stops when its
         * page is full; a burst at one instant stays in one partition.
         */
        EVENT_TIME
    }

    public record TimePartition(
            long secondsPerSlice, long secondsPerBucket, int bucketsPerId, EventBuckets eventBuckets) {
        /** Events spread by their id's hash, the default. */
        public TimePartition(long secondsPerSlice, long secondsPerBucket, int bucketsPerId) {
            this(secondsPerSlice, secondsPerBucket, bucketsPerId, EventBuckets.EVENT_ID);
        }
    }

    /**
     * A time_partition the namespace had before a change: it lays out the slices before
     * untilMicros (and after the previous one's). The control plane sets untilMicros to a
     * boundary of both slice grids after the slices already made, so a change applies to
     * future slices only and the existing ones keep their layout.
     */
    public record EarlierPartition(long untilMicros, TimePartition partition) {}

    public record Retention(Duration closeAfter, Duration deleteAfter) {}

    /** Field types an Elasticsearch mapping can take (the article's field_mapping). */
    public enum FieldType {
        KEYWORD,
        TEXT,
        INTEGER,
        LONG,
        DOUBLE,
        BOOLEAN,
        DATE
    }

    public record Index(boolean enabled, Map<String, FieldType> fieldMapping, Duration refreshInterval) {
        public static final Index DISABLED = new Index(false, Map.of(), Duration.ofSeconds(1));
    }

    public record Rollup(long coalesceMs, long clockSkewMs) {}

    /**
     * The accept window: an event is accepted when its time is no older than accept_limit and no
     * more than futureSkew ahead of the reference (the gateway's clock, or the Kafka record's
     * timestamp in the jobs, so a replay decides the same way).
     *
     * @see io.tally.model.AcceptWindow
     */
    public boolean accepts(long eventMicros, long referenceMicros) {
        return io.tally.model.AcceptWindow.accepts(acceptLimit, eventMicros, referenceMicros);
    }

    /** A time-series event appended by Kafka at storedMicros is stored ({@link io.tally.model.AcceptWindow#storable}). */
    public boolean storable(long eventMicros, long storedMicros) {
        return io.tally.model.AcceptWindow.storable(acceptLimit, eventMicros, storedMicros);
    }

    public boolean isCounter() {
        return kind == Kind.COUNTER;
    }
}
