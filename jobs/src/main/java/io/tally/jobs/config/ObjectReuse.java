package io.tally.jobs.config;

import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

/**
 * Tally's jobs hand a record to the next chained operator as it is, without the deep copy Flink
 * makes by default (through the record type's serializer: for a TimeSeries event's document that
 * is a Kryo copy of its field map, twice on its way to the Elasticsearch sink). Records from the
 * network are always new objects; only chained hand-offs change.
 *
 * <p>What every operator of the jobs keeps to, so that sharing is safe: it never changes a record
 * it was given, never changes a record after emitting it, and emits a new object each time (a
 * record may reach several chained operators, e.g. both filters after the counter decoder, and
 * sinks keep rows until their batch is written).
 */
public final class ObjectReuse {
    private ObjectReuse() {}

    /** Applied by each job's {@code build}, so its MiniCluster tests run the way the job runs. */
    public static void enable(StreamExecutionEnvironment env) {
        env.getConfig().enableObjectReuse();
    }
}
