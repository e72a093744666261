package io.tally.gateway;

import io.tally.common.CassandraClientSecurity;
import io.tally.common.ElasticsearchClientSecurity;
import io.tally.common.KafkaClientSecurity;
import io.tally.common.ServiceSettings;
import io.tally.common.ServiceSettings.Field;
import io.tally.model.Topics;
import java.util.List;
import java.util.Map;

/**
 * The gateway's settings, declared once with defaults and descriptions ({@link ServiceSettings}:
 * environment variable or {@code --name=value} flag, flags win; {@code --help} lists them).
 */
public final class GatewayConfig {
    public static final Field HOST =
            new Field("host", "TALLY_GATEWAY_HOST", "127.0.0.1", "Address the HTTP API binds to.");
    public static final Field PORT = new Field("port", "TALLY_GATEWAY_PORT", "8080", "HTTP port.");
    public static final Field EVENT_LOOPS = new Field(
            "http.event.loops",
            "TALLY_GATEWAY_EVENT_LOOPS",
            "0",
            "HTTP servers, one an event loop, sharing the port; 0: one a core the JVM sees.");
    public static final Field BOOTSTRAP =
            new Field("kafka.bootstrap", "TALLY_KAFKA_BOOTSTRAP", "127.0.0.1:9092", "Kafka bootstrap servers.");
    public static final Field REGISTRY =
            new Field("registry.url", "TALLY_REGISTRY_URL", "http://127.0.0.1:8085", "Schema registry URL.");
    public static final Field CONTROL_TOPIC = new Field(
            "control.topic",
            "TALLY_CONTROL_TOPIC",
            Topics.CONTROL_NAMESPACES,
            "The compacted topic Debezium streams namespace changes to.");
    public static final Field CONTROL_REPLAY_MS = new Field(
            "control.replay.timeout.ms",
            "TALLY_GATEWAY_CONTROL_REPLAY_TIMEOUT_MS",
            "60000",
            "How long start-up waits to replay the control topic before serving.");
    public static final Field POSTGRES_URL = new Field(
            "postgres.url",
            "TALLY_CONTROL_POSTGRES_URL",
            "jdbc:postgresql://127.0.0.1:55432/tally_control",
            "JDBC URL of the control plane's database (admin API).");
    public static final Field POSTGRES_USER = new Field(
            "postgres.user",
            "TALLY_CONTROL_POSTGRES_USER",
            "tally_admin",
            "Postgres role of the admin API (DML on namespaces only).");
    public static final Field POSTGRES_PASSWORD =
            new Field("postgres.password", "TALLY_CONTROL_POSTGRES_PASSWORD", "tally_admin", "Its password.");
    public static final Field CONNECT_URL = new Field(
            "connect.url",
            "TALLY_CONNECT_URL",
            "http://127.0.0.1:8083",
            "Kafka Connect REST URL (control-plane health).");
    public static final Field CONNECTOR = new Field(
            "connect.connector",
            "TALLY_CONTROL_CONNECTOR",
            "tally-control-plane",
            "Name of the Debezium connector of the control plane.");
    public static final Field ADMIN_TOKEN = new Field(
            "admin.token",
            "TALLY_GATEWAY_ADMIN_TOKEN",
            "",
            "Token the admin API (/v1/namespaces) and Recount require (Bearer, or a Basic password); empty = every"
                    + " admin call refused with 401 unless admin.open (./tally up always sets one:"
                    + " $TALLY_HOME/admin-token).");
    public static final Field ADMIN_OPEN = new Field(
            "admin.open",
            "TALLY_GATEWAY_ADMIN_OPEN",
            "false",
            "true: with no admin token, leave the admin API and Recount open to anyone who reaches the port.");
    public static final Field MAX_BODY =
            new Field("max.body.bytes", "TALLY_GATEWAY_MAX_BODY_BYTES", "4194304", "Largest request body (413 above).");
    public static final Field MAX_EVENTS = new Field(
            "max.events", "TALLY_GATEWAY_MAX_EVENTS", "1000", "Most events in one write request (413 above).");
    public static final Field MAX_ITEMS =
            new Field("max.items", "TALLY_GATEWAY_MAX_ITEMS", "64", "Most items in one event (413 above).");
    public static final Field MAX_VALUE = new Field(
            "max.value.bytes", "TALLY_GATEWAY_MAX_VALUE_BYTES", "65536", "Largest decoded eventItemValue (413 above).");
    public static final Field MAX_EVENT = new Field(
            "max.event.bytes",
            "TALLY_GATEWAY_MAX_EVENT_BYTES",
            "1000000",
            "Largest event as encoded for Kafka (413 EVENT_TOO_LARGE above); keep it under the producer's"
                    + " max.request.size and the topics' max.message.bytes (both 1 MiB), which would refuse it after the"
                    + " answer.");
    public static final Field MAX_ID = new Field(
            "max.id.length",
            "TALLY_GATEWAY_MAX_ID_LENGTH",
            "256",
            "Longest timeSeriesId, counter_name, eventId, token or item key.");
    public static final Field BUFFER_BYTES = new Field(
            "producer.buffer.bytes",
            "TALLY_GATEWAY_PRODUCER_BUFFER_BYTES",
            "67108864",
            "Producer buffer; when full, writes get 429.");
    public static final Field LINGER_MS = new Field(
            "producer.linger.ms",
            "TALLY_GATEWAY_PRODUCER_LINGER_MS",
            "10",
            "How long the producer of counter events waits to fill a batch (latency vs. CPU): every durable"
                    + " write waits about this long more for its ack, and each produce request it saves costs the"
                    + " broker and the producer's thread per request (Kafka 4's own default is 5;"
                    + " docs/performance-log.md).");
    public static final Field TIMESERIES_LINGER_MS = new Field(
            "producer.timeseries.linger.ms",
            "TALLY_GATEWAY_TIMESERIES_LINGER_MS",
            "30",
            "How long the producer of time-series events waits to fill a batch: a producer of their own, so"
                    + " batches of events fill produce requests without the counters' latency goal holding them to"
                    + " producer.linger.ms; a WriteEventRecordsSync is answered about this long later. The same"
                    + " value as producer.linger.ms: one producer for both topics.");
    public static final Field COMPRESSION = new Field(
            "producer.compression.type",
            "TALLY_GATEWAY_PRODUCER_COMPRESSION",
            "lz4",
            "Compression of the records the gateway produces (none, gzip, snappy, lz4, zstd).");
    public static final Field SYNC_TIMEOUT_MS = new Field(
            "sync.timeout.ms",
            "TALLY_GATEWAY_SYNC_TIMEOUT_MS",
            "5000",
            "How long a sync write waits for Kafka before 503.");
    public static final Field DELIVERY_TIMEOUT_MS = new Field(
            "delivery.timeout.ms",
            "TALLY_GATEWAY_DELIVERY_TIMEOUT_MS",
            "30000",
            "How long the producer retries a record; at most the store grace of time-series events (30000):"
                    + " a record delivered later is dead-lettered by the writer.");
    public static final Field TOKEN_CACHE = new Field(
            "idempotency.cache.entries",
            "TALLY_GATEWAY_IDEMPOTENCY_CACHE_ENTRIES",
            "200000",
            "Recent idempotency keys kept to answer 409 on reuse.");
    public static final Field CASSANDRA = new Field(
            "cassandra.contact",
            "TALLY_CASSANDRA_CONTACT",
            "127.0.0.1:9042",
            "Cassandra contact points host:port, comma-separated (reads).");
    public static final Field CASSANDRA_DATACENTER = new Field(
            "cassandra.datacenter", "TALLY_CASSANDRA_DATACENTER", "datacenter1", "Cassandra's local datacenter.");
    public static final Field CASSANDRA_CONSISTENCY = new Field(
            "cassandra.consistency",
            "TALLY_CASSANDRA_CONSISTENCY",
            "ONE",
            "Consistency level of the gateway's Cassandra reads (LOCAL_QUORUM on a cluster of 3, as the jobs write).");
    public static final Field TOKEN_SECRET = new Field(
            "page.token.secret",
            "TALLY_GATEWAY_PAGE_TOKEN_SECRET",
            "",
            "HMAC key of page tokens; empty = random per process (tokens then do not survive a restart).");
    public static final Field VIEW_MAX_COUNTERS = new Field(
            "counter.view.max.counters",
            "TALLY_GATEWAY_COUNTER_VIEW_MAX_COUNTERS",
            "1000000",
            "Most counters the in-memory counter view holds (about 170 bytes each, measured: 170 MB of the 1 GB heap"
                    + " the launcher gives the gateway); past it an arbitrary counter is dropped and read from"
                    + " Cassandra when asked, so size it to the counters being read. 0 turns the view off.");
    public static final Field READ_DEADLINE_MS = new Field(
            "read.deadline.ms",
            "TALLY_GATEWAY_READ_DEADLINE_MS",
            "2000",
            "A ReadEventRecords that ran this long returns what it found with a page token to resume (early return).");
    public static final Field READ_CACHE_BYTES = new Field(
            "read.cache.bytes",
            "TALLY_GATEWAY_READ_CACHE_BYTES",
            "67108864",
            "Heap for ReadEventRecords pages whose events are all final (behind the writer's progress less the"
                    + " namespace's accept_limit and the store grace), served again without Cassandra; least recently"
                    + " used pages go first. 0 turns the cache off.");
    public static final Field READ_CACHE_TTL_MS = new Field(
            "read.cache.ttl.ms",
            "TALLY_GATEWAY_READ_CACHE_TTL_MS",
            "600000",
            "Longest a cached page is served (it also goes when retention may drop the oldest slice it covers).");
    public static final Field WRITER_GROUP = new Field(
            "timeseries.writer.group",
            "TALLY_GATEWAY_TIMESERIES_WRITER_GROUP",
            "tally-timeseries-writer",
            "Consumer group of the TimeSeries writer job, whose committed offsets say which events are stored.");
    public static final Field CLOCK_SKEW_MS = new Field(
            "kafka.clock.skew.ms",
            "TALLY_GATEWAY_KAFKA_CLOCK_SKEW_MS",
            "2000",
            "How far the brokers' clocks may run behind the gateway's; the read cache keeps that much further back.");
    public static final Field MAX_PAGE =
            new Field("max.page.size", "TALLY_GATEWAY_MAX_PAGE_SIZE", "1000", "Largest pageSize of a read.");
    public static final Field ELASTICSEARCH = new Field(
            "elasticsearch.url",
            "TALLY_ELASTICSEARCH_URL",
            "http://127.0.0.1:9200",
            "Elasticsearch URL (search and aggregate).");
    /** The gateway's own settings; {@link #ALL} adds Kafka's client security. */
    private static final Field[] OWN = {
        ELASTICSEARCH,
        CASSANDRA,
        CASSANDRA_DATACENTER,
        CASSANDRA_CONSISTENCY,
        TOKEN_SECRET,
        MAX_PAGE,
        READ_DEADLINE_MS,
        READ_CACHE_BYTES,
        READ_CACHE_TTL_MS,
        WRITER_GROUP,
        CLOCK_SKEW_MS,
        VIEW_MAX_COUNTERS,
        HOST,
        PORT,
        BOOTSTRAP,
        REGISTRY,
        CONTROL_TOPIC,
        CONTROL_REPLAY_MS,
        POSTGRES_URL,
        POSTGRES_USER,
        POSTGRES_PASSWORD,
        CONNECT_URL,
        CONNECTOR,
        ADMIN_TOKEN,
        ADMIN_OPEN,
        MAX_BODY,
        MAX_EVENTS,
        MAX_ITEMS,
        MAX_VALUE,
        MAX_EVENT,
        MAX_ID,
        BUFFER_BYTES,
        LINGER_MS,
        TIMESERIES_LINGER_MS,
        COMPRESSION,
        SYNC_TIMEOUT_MS,
        DELIVERY_TIMEOUT_MS,
        TOKEN_CACHE,
        EVENT_LOOPS
    };

    public static final Field[] ALL = java.util.stream.Stream.of(
                    java.util.Arrays.stream(OWN),
                    KafkaClientSecurity.FIELDS.stream(),
                    CassandraClientSecurity.FIELDS.stream(),
                    ElasticsearchClientSecurity.FIELDS.stream())
            .flatMap(f -> f)
            .toArray(Field[]::new);

    private static final List<String> COMPRESSIONS = List.of("none", "gzip", "snappy", "lz4", "zstd");

    private static final List<Field> TEXT = List.of(
            HOST,
            COMPRESSION,
            BOOTSTRAP,
            REGISTRY,
            CASSANDRA,
            TOKEN_SECRET,
            ELASTICSEARCH,
            CONTROL_TOPIC,
            POSTGRES_URL,
            POSTGRES_USER,
            POSTGRES_PASSWORD,
            CONNECT_URL,
            CONNECTOR,
            ADMIN_TOKEN,
            ADMIN_OPEN,
            CASSANDRA_DATACENTER,
            CASSANDRA_CONSISTENCY,
            WRITER_GROUP);

    private final KafkaClientSecurity kafkaSecurity;
    private final CassandraClientSecurity cassandraSecurity;
    private final ElasticsearchClientSecurity elasticsearchSecurity;

    private final ServiceSettings settings;

    private GatewayConfig(ServiceSettings settings) {
        this.settings = settings;
        this.kafkaSecurity = KafkaClientSecurity.from(settings);
        this.cassandraSecurity = CassandraClientSecurity.from(settings);
        this.elasticsearchSecurity = ElasticsearchClientSecurity.from(settings);
    }

    public static GatewayConfig from(Map<String, String> env, String[] args) {
        GatewayConfig c = new GatewayConfig(ServiceSettings.from(List.of(ALL), env, args));
        for (Field f : ALL) {
            if (!TEXT.contains(f)
                    && !KafkaClientSecurity.FIELDS.contains(f)
                    && !CassandraClientSecurity.FIELDS.contains(f)
                    && !ElasticsearchClientSecurity.FIELDS.contains(f)) {
                c.longOf(f);
            }
        }
        c.adminToken();
        if (c.longOf(DELIVERY_TIMEOUT_MS) > io.tally.model.AcceptWindow.STORE_GRACE.toMillis()) {
            // a record delivered later than the grace would be dead-lettered after a 202
            throw new IllegalArgumentException(DELIVERY_TIMEOUT_MS.name() + "=" + c.get(DELIVERY_TIMEOUT_MS)
                    + " is longer than the store grace of time-series events ("
                    + io.tally.model.AcceptWindow.STORE_GRACE.toMillis() + " ms)");
        }
        if (!COMPRESSIONS.contains(c.get(COMPRESSION))) {
            throw new IllegalArgumentException(
                    COMPRESSION.name() + "=" + c.get(COMPRESSION) + " is none of " + String.join(", ", COMPRESSIONS));
        }
        return c;
    }

    public static String usage() {
        return ServiceSettings.usage(List.of(ALL));
    }

    public String get(Field f) {
        return settings.get(f);
    }

    /** New properties for one Kafka client of the gateway: the bootstrap servers and the security settings. */
    public java.util.Properties kafkaClient() {
        return kafkaSecurity.client(get(BOOTSTRAP));
    }

    public KafkaClientSecurity kafkaSecurity() {
        return kafkaSecurity;
    }

    public ElasticsearchClientSecurity elasticsearchSecurity() {
        return elasticsearchSecurity;
    }

    public CassandraClientSecurity cassandraSecurity() {
        return cassandraSecurity;
    }

    public io.tally.common.AdminToken adminToken() {
        return settings.adminToken(ADMIN_TOKEN, ADMIN_OPEN);
    }

    public long longOf(Field f) {
        return settings.longIn(f, 0, Long.MAX_VALUE);
    }

    public int intOf(Field f) {
        return settings.intIn(f, 0, Integer.MAX_VALUE);
    }

    /** How many HTTP servers (event loops) the gateway runs: the setting, or one a core. */
    public int eventLoops() {
        int loops = intOf(EVENT_LOOPS);
        return loops > 0 ? loops : Math.max(1, Runtime.getRuntime().availableProcessors());
    }
}
