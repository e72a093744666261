package io.tally.registry;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The _schemas topic as the registry's only store: one partition (a total order), compacted,
 * tailed by a reader thread that applies every record to {@link RegistryState}.
 */
public final class KafkaLog implements SchemaLog, AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(KafkaLog.class);

    private final String topic;
    private final TopicPartition partition;
    private final RegistryState state;
    private final Admin admin;
    private final KafkaProducer<String, String> producer;
    private final KafkaConsumer<String, String> consumer;
    private final Thread reader;
    private final long timeoutMs;
    private volatile boolean running = true;
    private volatile Throwable readerFailure;

    /** @param common the bootstrap servers and security every Kafka client of the registry uses */
    public KafkaLog(Properties common, String topic, RegistryState state, long timeoutMs) {
        this.topic = topic;
        this.partition = new TopicPartition(topic, 0);
        this.state = state;
        this.timeoutMs = timeoutMs;
        this.admin = Admin.create(common);
        Properties p = new Properties();
        p.putAll(common);
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        p.put(ProducerConfig.LINGER_MS_CONFIG, 0);
        p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, (int) Math.max(timeoutMs, 5000));
        p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, (int) Math.min(timeoutMs, 5000));
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class);
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class);
        this.producer = new KafkaProducer<>(p);
        Properties c = new Properties();
        c.putAll(common);
        c.put(ConsumerConfig.GROUP_ID_CONFIG, "tally-registry-" + UUID.randomUUID()); // never committed
        c.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        c.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        c.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class);
        c.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class);
        this.consumer = new KafkaConsumer<>(c);
        this.reader = new Thread(this::readLoop, "schemas-log-reader");
        this.reader.setDaemon(true);
    }

    /** Creates the topic if needed, replays it to the end, then keeps tailing it. */
    public void start() throws Exception {
        ensureTopic();
        consumer.assign(List.of(partition));
        consumer.seekToBeginning(List.of(partition));
        reader.start();
        syncToEnd();
        LOG.info(
                "replayed {} up to offset {}: {} schemas, max id {}",
                topic,
                state.appliedOffset(),
                state.schemaCount(),
                state.maxId());
    }

    private void ensureTopic() throws Exception {
        NewTopic t = new NewTopic(topic, 1, (short) 1).configs(Map.of("cleanup.policy", "compact"));
        try {
            admin.createTopics(List.of(t)).all().get(timeoutMs, TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            if (!(e.getCause() instanceof TopicExistsException)) {
                throw e;
            }
        }
        int partitions = admin.describeTopics(List.of(topic))
                .allTopicNames()
                .get(timeoutMs, TimeUnit.MILLISECONDS)
                .get(topic)
                .partitions()
                .size();
        if (partitions != 1) {
            throw new IllegalStateException(
                    topic + " has " + partitions + " partitions; the registry needs exactly 1 (a total order)");
        }
    }

    private void readLoop() {
        try {
            while (running) {
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
                    state.apply(r.offset(), r.key(), r.value());
                }
            }
        } catch (WakeupException e) {
            // closing
        } catch (Throwable t) {
            readerFailure = t;
            LOG.error("the _schemas reader stopped", t);
        } finally {
            consumer.close(Duration.ofSeconds(2));
        }
    }

    public boolean healthy() {
        return running && readerFailure == null && reader.isAlive();
    }

    /** Waits until every record in the log when called has been applied (read-your-writes across instances). */
    @Override
    public void syncToEnd() throws Exception {
        long end = admin.listOffsets(Map.of(partition, OffsetSpec.latest()))
                .all()
                .get(timeoutMs, TimeUnit.MILLISECONDS)
                .get(partition)
                .offset();
        awaitApplied(end - 1);
    }

    /** Appends a record (value null = tombstone) and waits until this instance has applied it. */
    @Override
    public long append(String key, String value) throws Exception {
        long offset = producer.send(new ProducerRecord<>(topic, 0, key, value))
                .get(timeoutMs, TimeUnit.MILLISECONDS)
                .offset();
        awaitApplied(offset);
        return offset;
    }

    private void awaitApplied(long offset) throws Exception {
        if (offset < 0) {
            return;
        }
        if (!state.awaitApplied(offset, timeoutMs)) {
            throw new TimeoutException("the _schemas reader did not reach offset " + offset + " within " + timeoutMs
                    + " ms" + (readerFailure != null ? " (reader failed: " + readerFailure + ")" : ""));
        }
    }

    @Override
    public void close() {
        running = false;
        consumer.wakeup();
        try {
            reader.join(3000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        producer.close(Duration.ofSeconds(3));
        admin.close(Duration.ofSeconds(3));
    }
}
