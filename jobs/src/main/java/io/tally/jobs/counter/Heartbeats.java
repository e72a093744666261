package io.tally.jobs.counter;

import java.nio.charset.StandardCharsets;
import org.apache.flink.api.common.serialization.SerializationSchema;
import org.apache.flink.connector.kafka.sink.KafkaRecordSerializationSchema;
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
            ProducerRecord<byte[], byte[]> r = new ProducerRecord<>(topic, (int) (tick % partitions), (Long) null, KEY, (byte[]) null);
            r.headers().add(HEADER, new byte[] {1});
            return r;
        }
    }
}
