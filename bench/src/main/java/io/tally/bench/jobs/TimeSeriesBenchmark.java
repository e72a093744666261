package io.tally.bench.jobs;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import io.tally.model.TallySchemas;
import io.tally.model.Topics;
import io.tally.namespace.NamespaceConfig.TimePartition;
import io.tally.namespace.TimeSlicePlanner;
import io.tally.serde.AvroSerde;
import io.tally.serde.RestSchemaRegistryClient;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;

/**
 * Load and ceilings for ./tally bench timeseries, one JSON line per run:
 * <pre>
 *   produce  --events N --ids K --spread-seconds S --value-bytes B --run R --namespace NS
 *            TimeSeriesEvents straight to Kafka (the writer's input), event times spread evenly
 *            over the last S seconds, two items each: deviceType (indexed) and payload (B bytes)
 *   cassandra-ceiling --events N --value-bytes B --in-flight F
 *            the same rows inserted with the raw async driver, F in flight, into a scratch table
 *            of the slice-table schema: what Cassandra takes from one client on this machine
 * </pre>
 */
public final class TimeSeriesBenchmark {
    static final String[] DEVICE_TYPES = {"tv", "phone", "tablet", "console", "browser"};

    private TimeSeriesBenchmark() {}

    public static void main(String[] args) throws Exception {
        BenchArgs a = BenchArgs.parse(
                args,
                Map.of(
                        "bootstrap",
                        "127.0.0.1:9092",
                        "registry",
                        "http://127.0.0.1:8085",
                        "cassandra",
                        "127.0.0.1:9042",
                        "namespace",
                        "bench_ts",
                        "events",
                        "100000",
                        "ids",
                        "1000",
                        "spread-seconds",
                        "60",
                        "value-bytes",
                        "150",
                        "run",
                        "r0",
                        "in-flight",
                        "128"));
        Map<String, String> o = a.options();
        switch (String.valueOf(a.command())) {
            case "produce" -> produce(o);
            case "cassandra-ceiling" -> cassandraCeiling(o);
            default -> throw new IllegalArgumentException(
                    "unknown phase " + a.command() + " (produce, cassandra-ceiling)");
        }
    }

    /** Event i of a run: the same on every call, so the ceiling inserts exactly the produced rows. */
    record BenchEvent(String timeSeriesId, long eventTimeMicros, String eventId, String deviceType, byte[] payload) {}

    static BenchEvent event(Map<String, String> o, long nowMicros, int i, Random random) {
        int events = Integer.parseInt(o.get("events"));
        int ids = Integer.parseInt(o.get("ids"));
        long spreadMicros = Long.parseLong(o.get("spread-seconds")) * 1_000_000L;
        byte[] payload = new byte[Integer.parseInt(o.get("value-bytes"))];
        random.nextBytes(payload);
        String run = o.get("run");
        return new BenchEvent(
                run + "-id-" + (i % ids),
                nowMicros - spreadMicros + spreadMicros * i / events,
                run + "-" + i,
                DEVICE_TYPES[i % DEVICE_TYPES.length],
                payload);
    }

    private static void produce(Map<String, String> o) throws Exception {
        String topic = Topics.TIMESERIES_EVENTS;
        AvroSerde serde = new AvroSerde(new RestSchemaRegistryClient(o.get("registry")), false);
        int events = Integer.parseInt(o.get("events"));
        String ns = o.get("namespace");
        long nowMicros = System.currentTimeMillis() * 1000;
        Random random = new Random(7);
        long t0 = System.nanoTime();
        try (BenchProducer producer = new BenchProducer(o.get("bootstrap"))) {
            for (int i = 0; i < events; i++) {
                BenchEvent e = event(o, nowMicros, i, random);
                GenericRecord rec = new GenericData.Record(TallySchemas.TIME_SERIES_EVENT);
                rec.put("namespace", ns);
                rec.put("time_series_id", e.timeSeriesId());
                rec.put("event_time", e.eventTimeMicros());
                rec.put("event_id", e.eventId());
                rec.put(
                        "items",
                        List.of(
                                item("deviceType", e.deviceType().getBytes(StandardCharsets.UTF_8)),
                                item("payload", e.payload())));
                rec.put("source", "bench");
                producer.send(topic, ns + "/" + e.timeSeriesId(), serde.serialize(topic, rec));
            }
        }
        double seconds = (System.nanoTime() - t0) / 1e9;
        System.out.printf(
                "{\"events\": %d, \"seconds\": %.3f, \"events_per_s\": %.0f, \"produced_at_micros\": %d}%n",
                events, seconds, events / seconds, nowMicros);
    }

    private static GenericRecord item(String key, byte[] value) {
        GenericRecord r = new GenericData.Record(TallySchemas.EVENT_ITEM);
        r.put("key", key);
        r.put("value", ByteBuffer.wrap(value));
        return r;
    }

    /**
     * A schema change with time to finish: dropping the table of 400,000 rows right after the
     * writer's run (a flush and a snapshot) took longer than the driver's 2 s and failed the run.
     */
    private static void ddl(CqlSession session, String cql) {
        session.execute(com.datastax.oss.driver.api.core.cql.SimpleStatement.newInstance(cql)
                .setTimeout(java.time.Duration.ofSeconds(60)));
    }

    private static void cassandraCeiling(Map<String, String> o) throws Exception {
        String[] hp = o.get("cassandra").split(":");
        int events = Integer.parseInt(o.get("events"));
        int maxInFlight = Integer.parseInt(o.get("in-flight"));
        // the stack's login and TLS, from the environment the launcher gives (TALLY_CASSANDRA_*)
        io.tally.common.CassandraClientSecurity security =
                io.tally.common.CassandraClientSecurity.from(io.tally.common.ServiceSettings.from(
                        io.tally.common.CassandraClientSecurity.FIELDS, System.getenv(), new String[0]));
        try (CqlSession session = io.tally.common.CassandraLogin.applied(
                        CqlSession.builder()
                                .addContactPoint(new InetSocketAddress(hp[0], Integer.parseInt(hp[1])))
                                .withLocalDatacenter("datacenter1"),
                        security)
                .build()) {
            ddl(
                    session,
                    "CREATE KEYSPACE IF NOT EXISTS tally_bench WITH replication = "
                            + "{'class': 'SimpleStrategy', 'replication_factor': 1}");
            ddl(session, "DROP TABLE IF EXISTS tally_bench.ceiling_rows");
            ddl(
                    session,
                    "CREATE TABLE tally_bench.ceiling_rows (time_series_id text, time_bucket int, "
                            + "event_bucket int, event_time bigint, event_id text, event_item_key text, event_item_value blob, "
                            + "value_metadata blob, PRIMARY KEY ((time_series_id, time_bucket, event_bucket), event_time, "
                            + "event_id, event_item_key)) WITH CLUSTERING ORDER BY (event_time DESC, event_id ASC, event_item_key ASC)");
            PreparedStatement insert = session.prepare(
                    "INSERT INTO tally_bench.ceiling_rows (time_series_id, time_bucket, "
                            + "event_bucket, event_time, event_id, event_item_key, event_item_value) VALUES (?, ?, ?, ?, ?, ?, ?)");
            Semaphore inFlight = new Semaphore(maxInFlight);
            AtomicReference<Throwable> failure = new AtomicReference<>();
            long nowMicros = System.currentTimeMillis() * 1000;
            Random random = new Random(7);
            TimeSlicePlanner planner = new TimeSlicePlanner(o.get("namespace"), new TimePartition(86400, 3600, 4));
            long cpu0 = processCpuNanos();
            long t0 = System.nanoTime();
            for (int i = 0; i < events && failure.get() == null; i++) {
                BenchEvent e = event(o, nowMicros, i, random);
                TimeSlicePlanner.Placement place = planner.place(e.eventTimeMicros(), e.eventId());
                for (String[] kv : new String[][] {{"deviceType", e.deviceType()}, {"payload", null}}) {
                    ByteBuffer value = kv[1] == null
                            ? ByteBuffer.wrap(e.payload())
                            : ByteBuffer.wrap(kv[1].getBytes(StandardCharsets.UTF_8));
                    inFlight.acquire();
                    session.executeAsync(insert.bind(
                                    e.timeSeriesId(),
                                    place.timeBucket(),
                                    place.eventBucket(),
                                    e.eventTimeMicros(),
                                    e.eventId(),
                                    kv[0],
                                    value))
                            .whenComplete((rs, err) -> {
                                if (err != null) {
                                    failure.compareAndSet(null, err);
                                }
                                inFlight.release();
                            });
                }
            }
            if (!inFlight.tryAcquire(maxInFlight, 120, TimeUnit.SECONDS)) {
                throw new IllegalStateException("inserts did not complete in 120 s");
            }
            if (failure.get() != null) {
                throw new IllegalStateException("insert failed", failure.get());
            }
            double seconds = (System.nanoTime() - t0) / 1e9;
            double clientCores = (processCpuNanos() - cpu0) / 1e9 / seconds;
            ddl(session, "DROP TABLE tally_bench.ceiling_rows");
            System.out.printf(
                    "{\"events\": %d, \"rows\": %d, \"seconds\": %.3f, \"events_per_s\": %.0f, "
                            + "\"rows_per_s\": %.0f, \"client_cores\": %.2f}%n",
                    events, 2L * events, seconds, events / seconds, 2 * events / seconds, clientCores);
        }
    }

    private static long processCpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
                .getProcessCpuTime();
    }
}
