package io.tally.bench.jobs;

import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * The benchmarks' load producer, with the gateway's producer settings (acks=all, idempotent,
 * lz4, 5 ms linger) so the jobs see what the gateway would write. Sends are asynchronous;
 * {@link #close} waits for all of them and fails with the first failure, so a run that lost
 * records never reports a rate.
 */
final class BenchProducer implements AutoCloseable {
    private final KafkaProducer<byte[], byte[]> producer;
    private final AtomicReference<Exception> failure = new AtomicReference<>();

    BenchProducer(String bootstrap) {
        producer = new KafkaProducer<>(
                Map.of(
                        ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
                        bootstrap,
                        ProducerConfig.ACKS_CONFIG,
                        "all",
                        ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG,
                        true,
                        ProducerConfig.COMPRESSION_TYPE_CONFIG,
                        "lz4",
                        ProducerConfig.LINGER_MS_CONFIG,
                        5,
                        ProducerConfig.BATCH_SIZE_CONFIG,
                        131072),
                new ByteArraySerializer(),
                new ByteArraySerializer());
    }

    void send(String topic, String key, byte[] value) {
        producer.send(new ProducerRecord<>(topic, key.getBytes(StandardCharsets.UTF_8), value), (md, err) -> {
            if (err != null) {
                failure.compareAndSet(null, err);
            }
        });
    }

    @Override
    public void close() throws Exception {
        try {
            producer.flush();
        } finally {
            producer.close();
        }
        if (failure.get() != null) {
            throw failure.get();
        }
    }
}
