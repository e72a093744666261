package io.tally.jobs.control;

import io.tally.model.Topics;
import io.tally.namespace.NamespaceChange;
import org.apache.flink.api.common.eventtime.Watermark;
import org.apache.flink.api.common.eventtime.WatermarkGenerator;
import org.apache.flink.api.common.eventtime.WatermarkOutput;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiterStrategy;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.connector.kafka.source.KafkaSource;
import org.apache.flink.connector.kafka.source.enumerator.initializer.OffsetsInitializer;
import org.apache.flink.connector.kafka.source.reader.deserializer.KafkaRecordDeserializationSchema;
import org.apache.flink.streaming.api.datastream.BroadcastStream;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.util.Collector;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The control plane as a Flink job sees it: the namespace changes Debezium streams to
 * tally.control.namespaces, broadcast to every parallel instance of the operators that need a
 * namespace's config, which keep them in broadcast state ({@link #NAMESPACES}: name to its last
 * change, a delete included). Checkpointed with the job, so a restore knows the configs it had.
 */
public final class ControlPlane {
    private static final Logger LOG = LoggerFactory.getLogger(ControlPlane.class);
    public static final String TOPIC = Topics.CONTROL_NAMESPACES;
    public static final MapStateDescriptor<String, NamespaceChange> NAMESPACES =
            new MapStateDescriptor<>("namespaces", Types.STRING, TypeInformation.of(NamespaceChange.class));

    private ControlPlane() {}

    /** Every change from the topic's beginning (the compacted topic holds each namespace's last one). */
    /** @param client the job's Kafka client security ({@code JobKafka#clientConfig}) */
    public static KafkaSource<NamespaceChange> source(String bootstrap, java.util.Properties client) {
        return KafkaSource.<NamespaceChange>builder()
                .setBootstrapServers(bootstrap)
                .setProperties(client)
                .setTopics(TOPIC)
                .setStartingOffsets(OffsetsInitializer.earliest())
                .setDeserializer(new ChangeDeserializer())
                .build();
    }

    /** The broadcast side of a job: its control-plane source (or a test's stream of changes). */
    public static BroadcastStream<NamespaceChange> broadcast(DataStream<NamespaceChange> changes) {
        return changes.broadcast(NAMESPACES);
    }

    /** The changes of the topic, with a tick a second mixed in ({@link NamespaceChange#tick}). */
    public static DataStream<NamespaceChange> stream(
            StreamExecutionEnvironment env, String bootstrap, java.util.Properties client) {
        DataStream<NamespaceChange> changes = env.fromSource(source(bootstrap, client), NEVER_HOLDS_BACK, TOPIC)
                .uid("control-plane-source")
                .name("control-plane")
                .setParallelism(1);
        DataGeneratorSource<NamespaceChange> ticks = new DataGeneratorSource<>(
                i -> NamespaceChange.tick(),
                Long.MAX_VALUE,
                RateLimiterStrategy.perSecond(1),
                TypeInformation.of(NamespaceChange.class));
        return changes.union(env.fromSource(ticks, ALWAYS_MAX, "control-ticks")
                .uid("control-ticks")
                .name("control-ticks")
                .setParallelism(1));
    }

    private static final WatermarkStrategy<NamespaceChange> ALWAYS_MAX =
            WatermarkStrategy.forGenerator(ctx -> new WatermarkGenerator<>() {
                @Override
                public void onEvent(NamespaceChange tick, long timestamp, WatermarkOutput out) {}

                @Override
                public void onPeriodicEmit(WatermarkOutput out) {
                    out.emitWatermark(new Watermark(Long.MAX_VALUE));
                }
            });

    /**
     * Control changes have no event time; a two-input operator's watermark is the minimum of
     * its inputs', so once the first change (the topic's snapshot) went by, this side says "no
     * limit" and the data side alone moves event time (the counter rollups depend on it). Until
     * then it holds event time back, so records parked for a namespace the operator has not heard
     * of yet are decided before any rollup passes them; an empty topic releases it after 10 s.
     */
    public static final WatermarkStrategy<NamespaceChange> NEVER_HOLDS_BACK =
            WatermarkStrategy.forGenerator(ctx -> new WatermarkGenerator<>() {
                private final long started = System.currentTimeMillis();
                private boolean seen;

                @Override
                public void onEvent(NamespaceChange change, long timestamp, WatermarkOutput out) {
                    seen = true;
                }

                @Override
                public void onPeriodicEmit(WatermarkOutput out) {
                    if (seen || System.currentTimeMillis() - started > 10_000) {
                        out.emitWatermark(new Watermark(Long.MAX_VALUE));
                    }
                }
            });

    /** Debezium change events to changes; tombstones and rows of other tables are skipped, a bad event is logged and skipped. */
    static final class ChangeDeserializer implements KafkaRecordDeserializationSchema<NamespaceChange> {
        @Override
        public void deserialize(ConsumerRecord<byte[], byte[]> r, Collector<NamespaceChange> out) {
            try {
                NamespaceChange.fromDebezium(r.value()).ifPresent(out::collect);
            } catch (IllegalArgumentException e) {
                LOG.error("control plane: skipping an unreadable change at offset {}: {}", r.offset(), e.getMessage());
            }
        }

        @Override
        public TypeInformation<NamespaceChange> getProducedType() {
            return TypeInformation.of(NamespaceChange.class);
        }
    }
}
