package io.tally.gateway;

import io.tally.gateway.service.WriteBatch.Outgoing;
import io.tally.gateway.service.WriteService;
import io.tally.gateway.service.WriteService.Backpressure;
import io.tally.gateway.service.WriteService.Unavailable;
import io.tally.model.Topics;
import io.tally.namespace.NamespaceChange;
import io.tally.serde.AvroSerde;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.producer.BufferExhaustedException;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * The gateway's Kafka producers: idempotent, acks=all, each with a bounded buffer. A batch that
 * does not fit the free buffer is refused whole before anything is sent (429), so memory
 * never grows without bound and a refused request writes nothing.
 *
 * <p>Time-series events have a producer of their own when their linger differs from the
 * counters': the counters' linger is held short by their latency goal, and at that linger a
 * WriteEventRecordsSync of ten events shared a produce request with one other request at most,
 * which the broker paid for per request (docs/performance-log.md, "A producer of its own for
 * time-series events").
 */
final class EventProducer implements WriteService.RecordSink, AutoCloseable {

    /** One Kafka producer and its free buffer. */
    private record Client(KafkaProducer<byte[], byte[]> producer, Metric bufferAvailable) {
        static Client of(GatewayConfig config, int lingerMs, String clientId) {
            Properties p = config.kafkaClient();
            p.put(ProducerConfig.CLIENT_ID_CONFIG, clientId); // the broker's request metrics and logs tell them apart
            p.put(ProducerConfig.ACKS_CONFIG, "all");
            p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
            p.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, config.get(GatewayConfig.COMPRESSION));
            p.put(ProducerConfig.LINGER_MS_CONFIG, lingerMs);
            p.put(ProducerConfig.BATCH_SIZE_CONFIG, 128 * 1024);
            // Kafka's default, stated: max.event.bytes keeps every event under it, so the broker and the
            // producer never refuse a record the gateway has answered for.
            p.put(ProducerConfig.MAX_REQUEST_SIZE_CONFIG, 1024 * 1024);
            p.put(ProducerConfig.BUFFER_MEMORY_CONFIG, config.longOf(GatewayConfig.BUFFER_BYTES));
            // Never park an event-loop thread: a full buffer is answered with 429 instead.
            p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, 50);
            long delivery = config.longOf(GatewayConfig.DELIVERY_TIMEOUT_MS);
            p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, (int) delivery);
            p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, (int)
                    Math.max(1, Math.min(delivery - 5 - lingerMs, 10_000)));
            KafkaProducer<byte[], byte[]> producer =
                    new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer());
            Metric available = null;
            for (Map.Entry<MetricName, ? extends Metric> e : producer.metrics().entrySet()) {
                if (e.getKey().name().equals("buffer-available-bytes")
                        && e.getKey().group().equals("producer-metrics")) {
                    available = e.getValue();
                }
            }
            return new Client(producer, available);
        }

        boolean fits(long bytes) {
            return bufferAvailable == null || ((Number) bufferAvailable.metricValue()).doubleValue() >= bytes;
        }
    }

    private final Client counters;
    /** The counters' client itself when both topics linger alike. */
    private final Client timeSeries;

    private final AvroSerde serde;
    private final GatewayMetrics metrics;

    EventProducer(GatewayConfig config, AvroSerde serde, GatewayMetrics metrics) {
        int counterLinger = config.intOf(GatewayConfig.LINGER_MS);
        int timeSeriesLinger = config.intOf(GatewayConfig.TIMESERIES_LINGER_MS);
        if (timeSeriesLinger == counterLinger) {
            this.counters = Client.of(config, counterLinger, "tally-gateway-events");
            this.timeSeries = counters;
        } else {
            this.counters = Client.of(config, counterLinger, "tally-gateway-counters");
            this.timeSeries = Client.of(config, timeSeriesLinger, "tally-gateway-timeseries");
        }
        this.serde = serde;
        this.metrics = metrics;
    }

    /** The producer that writes a topic's records. */
    KafkaProducer<byte[], byte[]> producerOf(String topic) {
        return clientOf(topic).producer();
    }

    private Client clientOf(String topic) {
        return Topics.TIMESERIES_EVENTS.equals(topic) ? timeSeries : counters;
    }

    /** The producers, one or two: what flush and close reach. */
    List<KafkaProducer<byte[], byte[]>> producers() {
        return timeSeries == counters
                ? List.of(counters.producer())
                : List.of(counters.producer(), timeSeries.producer());
    }

    /** Fetches topic metadata up front, so the first request does not wait for it. */
    void warmUp(List<String> topics, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        for (String t : topics) {
            while (true) {
                try {
                    producerOf(t).partitionsFor(t);
                    break;
                } catch (TimeoutException e) {
                    if (System.nanoTime() > deadline) {
                        throw e;
                    }
                }
            }
        }
    }

    /**
     * Encodes and sends every record of the batch; the future completes when Kafka has
     * acknowledged all of them (acks=all) or fails with the first error.
     *
     * @throws Backpressure when the free buffer cannot take the batch (nothing was sent, or,
     *     when other requests filled the buffer meanwhile, only a prefix of it)
     * @throws Unavailable when Kafka cannot take records at all (same proviso)
     */
    @Override
    public CompletableFuture<long[]> send(List<Outgoing> batch) {
        List<ProducerRecord<byte[], byte[]>> records = new ArrayList<>(batch.size());
        long bytes = 0;
        long headerOf = Long.MIN_VALUE; // a request's records share their namespace's version
        byte[] header = null;
        long createdOf = Long.MIN_VALUE;
        byte[] created = null;
        for (Outgoing o : batch) {
            byte[] value = serde.serialize(o.topic(), o.value());
            byte[] key = o.key().getBytes(StandardCharsets.UTF_8);
            bytes += value.length + key.length + 64;
            ProducerRecord<byte[], byte[]> r = new ProducerRecord<>(o.topic(), key, value);
            if (header == null || headerOf != o.namespaceVersion()) {
                headerOf = o.namespaceVersion();
                header = Long.toString(headerOf).getBytes(StandardCharsets.US_ASCII);
            }
            r.headers().add(NamespaceChange.VERSION_HEADER, header);
            if (o.namespaceCreatedMicros() != 0) { // 0: a namespace not from the control plane
                if (created == null || createdOf != o.namespaceCreatedMicros()) {
                    createdOf = o.namespaceCreatedMicros();
                    created = Long.toString(createdOf).getBytes(StandardCharsets.US_ASCII);
                }
                r.headers().add(NamespaceChange.CREATED_HEADER, created);
            }
            records.add(r);
        }
        Client client = clientOf(batch.get(0).topic()); // a request writes one topic
        if (!client.fits(bytes)) {
            throw new Backpressure(
                    "the producer buffer is full (Kafka is slower than the request rate); nothing was written");
        }
        BatchAck ack = new BatchAck(records.size(), metrics);
        for (int i = 0; i < records.size(); i++) {
            int at = i;
            client.producer().send(records.get(i), (md, err) -> ack.record(at, md == null ? 0 : md.timestamp(), err));
            // A full buffer or missing metadata is reported through the callback, during send().
            Throwable err = ack.failure();
            if (err instanceof BufferExhaustedException) {
                throw new Backpressure("the producer buffer is full" + partial(i));
            }
            if (err instanceof TimeoutException) {
                throw new Unavailable("Kafka did not answer for metadata within max.block.ms" + partial(i));
            }
        }
        return ack.done;
    }

    /**
     * The acknowledgements of one request's records, counted down on the producer's thread: one
     * future a request, not one a record joined by allOf (a batch of 100 events made 100 futures
     * and the tree that joined them).
     */
    private static final class BatchAck {
        final CompletableFuture<long[]> done = new CompletableFuture<>();
        private final long[] stored;
        private final AtomicInteger left;
        private final GatewayMetrics metrics;
        private final long t0 = System.nanoTime();
        private volatile Throwable failure;

        BatchAck(int records, GatewayMetrics metrics) {
            this.stored = new long[records];
            this.left = new AtomicInteger(records);
            this.metrics = metrics;
        }

        /** @param timestamp LogAppendTime or the record's CreateTime: what the jobs judge */
        void record(int at, long timestamp, Exception err) {
            if (err != null) {
                metrics.produceFailures.inc();
                if (failure == null) {
                    failure = err;
                }
                done.completeExceptionally(err);
                return;
            }
            metrics.produceSeconds.observe((System.nanoTime() - t0) / 1e9);
            stored[at] = timestamp;
            if (left.decrementAndGet() == 0) {
                done.complete(stored); // after a failure, a no-op: the first error is the answer
            }
        }

        Throwable failure() {
            return failure;
        }
    }

    private static String partial(int sent) {
        return sent == 0 ? "" : " (" + sent + " records of the request were already sent; retry with the same ids)";
    }

    /** True when the producer has metadata for every topic (so sends do not time out at once). */
    boolean ready(List<String> topics) {
        try {
            for (String t : topics) {
                producerOf(t).partitionsFor(t);
            }
            return true;
        } catch (RuntimeException e) {
            return false;
        }
    }

    void flush() {
        producers().forEach(KafkaProducer::flush);
    }

    @Override
    public void close() {
        producers().forEach(p -> p.close(Duration.ofSeconds(10)));
    }
}
