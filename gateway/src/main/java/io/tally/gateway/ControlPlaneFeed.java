package io.tally.gateway;

import io.tally.namespace.InvalidConfigException;
import io.tally.namespace.NamespaceCatalog;
import io.tally.namespace.NamespaceChange;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps the gateway's {@link NamespaceCatalog} equal to the control plane: replays the
 * compacted tally.control.namespaces topic from the beginning (no consumer group: every
 * gateway reads all of it), then applies each change as Debezium streams it. Postgres or
 * Connect being down only means no new changes; the catalog keeps the last known configs.
 */
final class ControlPlaneFeed implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ControlPlaneFeed.class);

    private final KafkaConsumer<byte[], byte[]> consumer;
    private final String topic;
    private final NamespaceCatalog catalog;
    private final Thread thread;
    private final CountDownLatch caughtUp = new CountDownLatch(1);
    private final AtomicLong applied = new AtomicLong();
    private volatile boolean closed;

    private final GatewayMetrics metrics;

    /** @param kafka the bootstrap servers and security of the gateway's Kafka clients (a copy of its own) */
    ControlPlaneFeed(Properties kafka, String topic, NamespaceCatalog catalog, GatewayMetrics metrics) {
        this.metrics = metrics;
        Properties p = kafka;
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.CLIENT_ID_CONFIG, "tally-gateway-control-plane");
        // Kafka's 500 ms fetch wait, not less: the broker answers a fetch as soon as one record is
        // there (fetch.min.bytes 1), so a change applies as fast either way, while a shorter wait
        // only made 20 empty fetches a second at rest (12 ms of the gateway's CPU a second)
        p.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, "500");
        p.put(ConsumerConfig.FETCH_MIN_BYTES_CONFIG, "1");
        this.consumer = new KafkaConsumer<>(p);
        this.topic = topic;
        this.catalog = catalog;
        this.thread = new Thread(this::run, "control-plane-feed");
        this.thread.setDaemon(true);
    }

    /** Starts reading and waits until the topic's current end was applied (or the timeout). */
    boolean start(Duration waitForReplay) throws InterruptedException {
        thread.start();
        return caughtUp.await(waitForReplay.toMillis(), TimeUnit.MILLISECONDS);
    }

    boolean caughtUp() {
        return caughtUp.getCount() == 0;
    }

    long applied() {
        return applied.get();
    }

    private void run() {
        try {
            List<TopicPartition> partitions = awaitPartitions();
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            Map<TopicPartition, Long> end = consumer.endOffsets(partitions);
            while (!closed) {
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
                    apply(r);
                }
                if (caughtUp.getCount() > 0
                        && end.entrySet().stream().allMatch(e -> consumer.position(e.getKey()) >= e.getValue())) {
                    LOG.info(
                            "control plane replayed: {} namespaces",
                            catalog.all().size());
                    caughtUp.countDown();
                }
            }
        } catch (WakeupException e) {
            if (!closed) {
                throw e;
            }
        } catch (RuntimeException e) {
            LOG.error("control-plane feed stopped; namespaces are frozen at their last known configs", e);
        } finally {
            consumer.close(Duration.ofSeconds(2));
        }
    }

    private List<TopicPartition> awaitPartitions() {
        while (!closed) {
            try {
                var infos = consumer.partitionsFor(topic, Duration.ofSeconds(5));
                if (infos != null && !infos.isEmpty()) {
                    return infos.stream()
                            .map(i -> new TopicPartition(i.topic(), i.partition()))
                            .toList();
                }
            } catch (org.apache.kafka.common.errors.TimeoutException e) {
                LOG.warn("waiting for topic {}: {}", topic, e.getMessage());
            }
        }
        throw new WakeupException();
    }

    private void apply(ConsumerRecord<byte[], byte[]> r) {
        try {
            NamespaceChange.fromDebezium(r.value()).ifPresent(change -> {
                catalog.apply(change);
                applied.incrementAndGet();
                metrics.controlChanges
                        .labelValues(change.deleted ? "delete" : "upsert")
                        .inc();
                LOG.info("control plane: {}", change);
            });
        } catch (InvalidConfigException | IllegalArgumentException e) {
            // The admin API validates before it writes, so this is a row written around it.
            LOG.error("control plane: ignoring an invalid change at offset {}: {}", r.offset(), e.getMessage());
        }
    }

    @Override
    public void close() {
        closed = true;
        consumer.wakeup();
    }
}
