package io.tally.gateway.service;

import io.tally.model.Micros;
import io.tally.model.Topics;
import io.tally.serde.AvroSerde;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.ToLongFunction;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tally.v1.CounterRollup;

/**
 * The counters' current rollups in memory: an event-sourced view of the compacted topic
 * tally.counter.rollups that CounterRollupJob publishes every rollup to. Rebuilt from the topic's
 * start when the gateway starts (compaction keeps it one record a counter), then followed; GetCount
 * answers from it without a Cassandra read. Bounded: past maxCounters the counter that came into
 * the view longest ago is dropped, and read from Cassandra again when asked (then cached). Until the rebuild reached the
 * topic's end as it was at start, {@link #get} answers nothing and reads go to Cassandra.
 */
public final class CounterView implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(CounterView.class);

    /**
     * A counter's rollup: the count at rollupMicros, and its newest accepted event's time (0:
     * unknown); live: an ACCURATE counter's live total (the rollup plus the events accepted since).
     */
    public record Rollup(
            long count, long rollupMicros, long lastWriteMicros, boolean live, long namespaceCreatedMicros) {
        public Rollup(long count, long rollupMicros, long lastWriteMicros, boolean live) {
            this(count, rollupMicros, lastWriteMicros, live, 0);
        }
    }

    private final Map<String, Rollup> counters = new ConcurrentHashMap<>();
    /**
     * The keys in the order they came into the view, for the bound. Dropping a map's first key
     * instead degrades: a hash map does not shrink, so each removal left one more empty bin at the
     * front for the next iterator to walk past (after bench counters filled a view of a million,
     * EVENTUAL counts showed their rollups up to a minute late). A key removed otherwise stays here
     * until it comes up; dropping it then is harmless.
     */
    private final java.util.Queue<String> arrivals = new java.util.concurrent.ConcurrentLinkedQueue<>();

    private final int maxCounters;
    private final KafkaConsumer<byte[], byte[]> consumer;
    private final AvroSerde serde;
    private final Thread follower;
    private volatile boolean caughtUp;
    private volatile boolean closed;
    private final AtomicLong applied = new AtomicLong();
    private final ToLongFunction<String> namespaceCreated;

    /**
     * @param namespaceCreated when the live namespace of a name was created (0: unknown): a record
     *     of one created before (deleted and created again since) is not the counter's
     */
    public CounterView(Properties kafka, AvroSerde serde, int maxCounters, ToLongFunction<String> namespaceCreated) {
        this.serde = serde;
        this.namespaceCreated = namespaceCreated;
        this.maxCounters = maxCounters;
        Properties p = kafka; // bootstrap servers and security: the gateway's copy for this consumer
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false); // assigned, no group: every gateway reads it all
        p.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 5000);
        this.consumer = new KafkaConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer());
        this.follower = new Thread(this::follow, "counter-view");
        follower.setDaemon(true);
    }

    public void start() {
        follower.start();
    }

    /** The counter's rollup as the view holds it; empty while rebuilding or when it holds none (ask Cassandra). */
    public java.util.Optional<Rollup> get(String namespace, String counter) {
        if (!caughtUp) {
            return java.util.Optional.empty();
        }
        Rollup r = counters.get(key(namespace, counter));
        if (r != null && r.namespaceCreatedMicros() < namespaceCreated.applyAsLong(namespace)) {
            // of the namespace of that name that was deleted: this one's counter is not in the view
            counters.remove(key(namespace, counter), r);
            return java.util.Optional.empty();
        }
        return java.util.Optional.ofNullable(r);
    }

    /**
     * A rollup read from Cassandra for a counter the view did not hold (evicted, or rolled up before
     * the topic existed): kept unless the topic brought one meanwhile; the topic's next one wins.
     * Not during the rebuild: the rebuild brings every counter's latest rollup itself.
     */
    public void remember(String namespace, String counter, Rollup r) {
        Rollup current = new Rollup(
                r.count(), r.rollupMicros(), r.lastWriteMicros(), r.live(), namespaceCreated.applyAsLong(namespace));
        if (caughtUp && counters.putIfAbsent(key(namespace, counter), current) == null) {
            arrived(key(namespace, counter));
        }
    }

    public boolean caughtUp() {
        return caughtUp;
    }

    public int size() {
        return counters.size();
    }

    /** Rollups applied from the topic since start. */
    public long applied() {
        return applied.get();
    }

    private static String key(String namespace, String counter) {
        return namespace + "/" + counter; // namespaces hold no '/', so the key is unambiguous
    }

    /** A record as if it came from the topic, the rebuild done (for tests of the readers). */
    void applied(String namespace, String counter, Rollup r) {
        put(key(namespace, counter), r);
        caughtUp = true;
    }

    private void put(String key, Rollup r) {
        boolean[] arrived = {false};
        // a later record of the same rollup time wins too: live totals move without a new rollup
        counters.compute(key, (k, old) -> {
            arrived[0] = old == null;
            return old == null || r.rollupMicros() >= old.rollupMicros() ? r : old;
        });
        if (arrived[0]) {
            arrived(key);
        }
    }

    /** A counter came into the view: the oldest ones leave while the view holds too many. */
    private void arrived(String key) {
        arrivals.add(key);
        while (counters.size() > maxCounters) {
            String oldest = arrivals.poll();
            if (oldest == null) {
                break;
            }
            counters.remove(oldest);
        }
    }

    private void follow() {
        while (!closed) {
            try {
                List<TopicPartition> partitions = new ArrayList<>();
                for (PartitionInfo pi : consumer.partitionsFor(Topics.COUNTER_ROLLUPS, Duration.ofSeconds(30))) {
                    partitions.add(new TopicPartition(pi.topic(), pi.partition()));
                }
                consumer.assign(partitions);
                consumer.seekToBeginning(partitions);
                Map<TopicPartition, Long> ends = new HashMap<>(consumer.endOffsets(partitions));
                ends.entrySet().removeIf(e -> e.getValue() == 0);
                caughtUp = ends.isEmpty();
                while (!closed) {
                    for (ConsumerRecord<byte[], byte[]> rec : consumer.poll(Duration.ofMillis(500))) {
                        apply(rec);
                        Long end = ends.get(new TopicPartition(rec.topic(), rec.partition()));
                        if (end != null && rec.offset() + 1 >= end) {
                            ends.remove(new TopicPartition(rec.topic(), rec.partition()));
                        }
                    }
                    if (!caughtUp) {
                        for (var it = ends.entrySet().iterator(); it.hasNext(); ) {
                            var e = it.next();
                            if (consumer.position(e.getKey()) >= e.getValue()) {
                                it.remove();
                            }
                        }
                        if (ends.isEmpty()) {
                            caughtUp = true;
                            LOG.info(
                                    "counter view rebuilt: {} counters from {}",
                                    counters.size(),
                                    Topics.COUNTER_ROLLUPS);
                        }
                    }
                }
            } catch (WakeupException e) {
                return;
            } catch (RuntimeException e) {
                if (closed) {
                    return;
                }
                LOG.warn("counter view: {} unreadable ({}); retrying", Topics.COUNTER_ROLLUPS, e.toString());
                try {
                    Thread.sleep(1000);
                } catch (InterruptedException ie) {
                    return;
                }
            }
        }
    }

    private void apply(ConsumerRecord<byte[], byte[]> rec) {
        if (rec.value() == null) {
            if (rec.key() != null) {
                counters.remove(new String(rec.key(), java.nio.charset.StandardCharsets.UTF_8)); // a tombstone
            }
            return;
        }
        try {
            CounterRollup r = serde.deserialize(rec.value(), CounterRollup.class);
            put(
                    key(r.getNamespace(), r.getCounter()),
                    new Rollup(
                            r.getCount(),
                            Micros.of(r.getRollupTime()),
                            Micros.of(r.getLastWriteTime()),
                            r.getLive(),
                            r.getNamespaceCreated()));
            applied.incrementAndGet();
        } catch (RuntimeException e) {
            LOG.warn(
                    "counter view: skipping an undecodable record at {}-{}@{}: {}",
                    rec.topic(),
                    rec.partition(),
                    rec.offset(),
                    e.toString());
        }
    }

    @Override
    public void close() {
        closed = true;
        consumer.wakeup();
        try {
            follower.join(5000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        consumer.close(Duration.ofSeconds(2));
    }
}
