package io.tally.jobs.counter;

import java.io.Serializable;
import java.nio.charset.StandardCharsets;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.serialization.SerializationSchema;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiterStrategy;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.connector.kafka.sink.KafkaRecordSerializationSchema;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.util.Collector;
import org.apache.kafka.clients.producer.ProducerRecord;

/**
 * Heartbeats for tally.counter.events: an empty record into every partition each interval.
 * The broker stamps them with its append time like any counter event, so a quiet partition's
 * watermark still advances, and since it advances only through the partition's own log, it
 * never overtakes a record written before it. Consumers skip records without a value.
 */
public final class Heartbeats {
    public static final String HEADER = "tally-heartbeat";
    static final byte[] KEY = "__heartbeat__".getBytes(StandardCharsets.UTF_8);

    private Heartbeats() {}

    /**
     * The heartbeat branch of the rollup job (parallelism 1 by design: one writer of ticks).
     * Each interval is one round: a heartbeat into every partition at once, so the round goes
     * to the broker in one produce request and reaches the job in one fetch (a tick a partition
     * spread over the interval made a request and a watermark step each: at rest, a third of the
     * broker's produce requests).
     *
     * @param sink where tick i goes (production: {@link Serializer} into partition i mod partitions)
     * @param partitions the topic's partitions: every one gets a heartbeat each interval
     * @param ticks how many ticks the branch makes, in whole rounds (unbounded in production; a
     *     test bounds it so its job ends)
     */
    public record Branch(Sink<Long> sink, int partitions, long intervalMs, long ticks) implements Serializable {
        public void attach(StreamExecutionEnvironment env) {
            int n = partitions;
            long rounds = ticks == Long.MAX_VALUE ? Long.MAX_VALUE : (ticks + n - 1) / n;
            DataGeneratorSource<Long> source = new DataGeneratorSource<>(
                    i -> i, rounds, RateLimiterStrategy.perSecond(1000.0 / intervalMs), Types.LONG);
            env.fromSource(source, WatermarkStrategy.noWatermarks(), "heartbeat-ticks")
                    .uid("heartbeat-ticks")
                    .setParallelism(1)
                    .flatMap((Long round, Collector<Long> out) -> {
                        for (int p = 0; p < n; p++) {
                            out.collect(round * n + p);
                        }
                    })
                    .returns(Types.LONG)
                    .uid("heartbeat-rounds")
                    .name("heartbeat-rounds")
                    .setParallelism(1)
                    .sinkTo(sink)
                    .uid("heartbeats")
                    .name("heartbeats")
                    .setParallelism(1);
        }
    }

    /** Serializes tick i into partition i mod partitions. */
    public static final class Serializer implements KafkaRecordSerializationSchema<Long> {
        private final String topic;
        private final int partitions;

        public Serializer(String topic, int partitions) {
            this.topic = topic;
            this.partitions = partitions;
        }

        @Override
        public void open(SerializationSchema.InitializationContext context, KafkaSinkContext sinkContext) {}

        @Override
        public ProducerRecord<byte[], byte[]> serialize(Long tick, KafkaSinkContext context, Long timestamp) {
            ProducerRecord<byte[], byte[]> r =
                    new ProducerRecord<>(topic, (int) (tick % partitions), (Long) null, KEY, (byte[]) null);
            r.headers().add(HEADER, new byte[] {1});
            return r;
        }
    }
}
