package io.tally.gateway;

import io.tally.gateway.service.StoredHorizon;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * Where the TimeSeries writer is, from Kafka: its consumer group's committed offsets (Flink commits
 * them when a checkpoint completes, after its sinks flushed, so a committed offset means every
 * record before it is in Cassandra) against each partition's end. A partition the writer has read
 * to its end is stored up to the time its end was asked; one it lags in is stored up to the
 * broker's timestamp of the first record not yet committed (LogAppendTime only grows within a
 * partition). The topic's records must carry the broker's clock: a CreateTime record makes the
 * answer "unknown".
 */
final class WriterProgress implements StoredHorizon.Probe {
    private static final Duration TIMEOUT = Duration.ofSeconds(5);

    private final Admin admin;
    private final KafkaConsumer<byte[], byte[]> consumer;
    private final String topic;
    private final String group;

    WriterProgress(Properties kafka, String topic, String group) {
        Properties p = new Properties();
        p.putAll(kafka);
        this.admin = Admin.create(p);
        Properties c = new Properties();
        c.putAll(kafka);
        c.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        c.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "none");
        c.put(ConsumerConfig.CLIENT_ID_CONFIG, "tally-gateway-writer-progress");
        c.put(ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG, "1024"); // one batch is all it reads
        c.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, "100");
        this.consumer = new KafkaConsumer<>(c, new ByteArrayDeserializer(), new ByteArrayDeserializer());
        this.topic = topic;
        this.group = group;
    }

    @Override
    public synchronized long storedBeforeMillis() throws Exception {
        long askedAt = System.currentTimeMillis(); // before the ends: what is appended later is later
        List<TopicPartition> partitions = new ArrayList<>();
        for (PartitionInfo info : consumer.partitionsFor(topic, TIMEOUT)) {
            partitions.add(new TopicPartition(topic, info.partition()));
        }
        Map<TopicPartition, Long> ends = consumer.endOffsets(partitions, TIMEOUT);
        Map<TopicPartition, OffsetAndMetadata> committed = admin.listConsumerGroupOffsets(group)
                .partitionsToOffsetAndMetadata()
                .get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        long before = askedAt;
        Map<TopicPartition, Long> behind = new HashMap<>();
        for (TopicPartition tp : partitions) {
            OffsetAndMetadata at = committed.get(tp);
            if (at == null) {
                return Long.MIN_VALUE; // the writer has not committed there yet
            }
            if (at.offset() < ends.getOrDefault(tp, 0L)) {
                behind.put(tp, at.offset());
            }
        }
        if (behind.isEmpty()) {
            return before;
        }
        // every partition stays assigned and paused between probes: a partition unassigned while
        // its fetch was in flight had the consumer warn of it, once a partition and probe
        if (!consumer.assignment().equals(new java.util.HashSet<>(partitions))) {
            consumer.assign(partitions);
        }
        consumer.pause(partitions);
        behind.forEach(consumer::seek);
        consumer.resume(behind.keySet());
        long deadline = System.nanoTime() + TIMEOUT.toNanos();
        while (!behind.isEmpty()) {
            if (System.nanoTime() > deadline) {
                consumer.pause(behind.keySet());
                return Long.MIN_VALUE;
            }
            for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
                TopicPartition tp = new TopicPartition(r.topic(), r.partition());
                Long first = behind.get(tp);
                if (first == null || r.offset() < first) {
                    continue;
                }
                if (r.timestampType() != TimestampType.LOG_APPEND_TIME) {
                    consumer.pause(consumer.assignment());
                    return Long.MIN_VALUE;
                }
                before = Math.min(before, r.timestamp());
                behind.remove(tp);
                consumer.pause(List.of(tp));
            }
        }
        return before;
    }

    @Override
    public void close() {
        consumer.close(Duration.ofSeconds(2));
        admin.close(Duration.ofSeconds(2));
    }
}
