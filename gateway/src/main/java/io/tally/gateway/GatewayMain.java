package io.tally.gateway;

import io.tally.gateway.service.CassandraSession;
import io.tally.gateway.service.ClosedPageCache;
import io.tally.gateway.service.CounterQueries;
import io.tally.gateway.service.CounterRecount;
import io.tally.gateway.service.CounterView;
import io.tally.gateway.service.ElasticsearchSearch;
import io.tally.gateway.service.EventSearchQueries;
import io.tally.gateway.service.IdempotencyCache;
import io.tally.gateway.service.NamespaceAdmin;
import io.tally.gateway.service.NamespaceResolver;
import io.tally.gateway.service.NamespaceStore;
import io.tally.gateway.service.PageTokens;
import io.tally.gateway.service.StoredHorizon;
import io.tally.gateway.service.TimeSeriesQueries;
import io.tally.gateway.service.WriteService;
import io.tally.model.TallySchemas;
import io.tally.model.Topics;
import io.tally.namespace.NamespaceCatalog;
import io.tally.serde.AvroSerde;
import io.tally.serde.RestSchemaRegistryClient;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.http.HttpServerOptions;
import java.time.Duration;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Starts the gateway: namespaces, schemas (looked up once, cached), Kafka producer and
 * health, then one HTTP server per core, each on its own Vert.x event loop. SIGTERM drains: stop
 * accepting, flush the producer, exit.
 */
public final class GatewayMain {
    /**
     * Plain HTTP/1.1 and JSON: no WebSocket, so no WebSocket compression handler in every
     * connection's pipeline (Vert.x adds one by default, and each request and answer passed it).
     */
    private static final HttpServerOptions HTTP = new HttpServerOptions()
            .setPerMessageWebSocketCompressionSupported(false)
            .setPerFrameWebSocketCompressionSupported(false);

    private static final Logger LOG = LoggerFactory.getLogger(GatewayMain.class);

    private GatewayMain() {}

    public static void main(String[] args) throws Exception {
        if (args.length == 1 && (args[0].equals("--help") || args[0].equals("-h"))) {
            System.out.println(
                    "tally-gateway: Counter and TimeSeries ingestion over HTTP/JSON\n" + GatewayConfig.usage());
            return;
        }
        GatewayConfig config = GatewayConfig.from(System.getenv(), args);
        GatewayMetrics metrics = new GatewayMetrics();
        NamespaceCatalog catalog = new NamespaceCatalog();
        LOG.info("Kafka at {}: {}", config.get(GatewayConfig.BOOTSTRAP), config.kafkaSecurity());
        ControlPlaneFeed feed =
                new ControlPlaneFeed(config.kafkaClient(), config.get(GatewayConfig.CONTROL_TOPIC), catalog, metrics);
        if (!feed.start(Duration.ofMillis(config.longOf(GatewayConfig.CONTROL_REPLAY_MS)))) {
            LOG.warn(
                    "the control topic was not replayed in time; serving the namespaces known so far, more apply as they arrive");
        }
        LOG.info("namespaces: {}", catalog.all().stream().map(n -> n.name()).toList());
        NamespaceStore store = new NamespaceStore(
                config.get(GatewayConfig.POSTGRES_URL),
                config.get(GatewayConfig.POSTGRES_USER),
                config.get(GatewayConfig.POSTGRES_PASSWORD));
        ControlPlaneHealth control = new ControlPlaneHealth(
                store, config.get(GatewayConfig.CONNECT_URL), config.get(GatewayConfig.CONNECTOR), feed);
        control.start(Duration.ofSeconds(2));
        metrics.gauge(
                "tally_control_plane_up",
                "1 when Postgres and the Debezium connector can take and stream namespace changes",
                control::up);

        RestSchemaRegistryClient registry = new RestSchemaRegistryClient(config.get(GatewayConfig.REGISTRY));
        lookUpSchemas(registry);
        EventProducer producer = new EventProducer(config, new AvroSerde(registry, false), metrics);
        producer.warmUp(
                List.of(WriteRequestParser.COUNTER_TOPIC, WriteRequestParser.TIMESERIES_TOPIC), Duration.ofSeconds(60));

        List<String> topics = List.of(WriteRequestParser.COUNTER_TOPIC, WriteRequestParser.TIMESERIES_TOPIC);
        KafkaHealth kafka = new KafkaHealth(config.kafkaClient(), () -> producer.ready(topics));
        kafka.start();
        NamespaceResolver namespaces = new NamespaceResolver(catalog);
        WriteRequestParser parser = new WriteRequestParser(namespaces, config);
        PageTokens pageTokens = new PageTokens(config.get(GatewayConfig.TOKEN_SECRET));
        CassandraSession cassandra = new CassandraSession(
                config.get(GatewayConfig.CASSANDRA),
                config.get(GatewayConfig.CASSANDRA_DATACENTER),
                config.get(GatewayConfig.CASSANDRA_CONSISTENCY),
                config.cassandraSecurity());
        LOG.info("Cassandra at {}: {}", config.get(GatewayConfig.CASSANDRA), config.cassandraSecurity());
        cassandra.connectInBackground();
        long cacheBytes = config.longOf(GatewayConfig.READ_CACHE_BYTES);
        StoredHorizon horizon = cacheBytes > 0
                ? new StoredHorizon(
                        new WriterProgress(
                                config.kafkaClient(), Topics.TIMESERIES_EVENTS, config.get(GatewayConfig.WRITER_GROUP)),
                        1_000,
                        config.longOf(GatewayConfig.CLOCK_SKEW_MS),
                        System::nanoTime)
                : StoredHorizon.NONE;
        TimeSeriesQueries timeSeries = new TimeSeriesQueries(
                cassandra,
                pageTokens,
                config.longOf(GatewayConfig.READ_DEADLINE_MS),
                horizon,
                new ClosedPageCache(
                        cacheBytes, config.longOf(GatewayConfig.READ_CACHE_TTL_MS), System::currentTimeMillis),
                metrics::readCache);
        EventSearchQueries search = new EventSearchQueries(
                new ElasticsearchSearch(config.get(GatewayConfig.ELASTICSEARCH), config.elasticsearchSecurity()),
                pageTokens);
        int viewMax = config.intOf(GatewayConfig.VIEW_MAX_COUNTERS);
        CounterView view = viewMax > 0
                ? new CounterView(config.kafkaClient(), new AvroSerde(registry, false), viewMax, catalog::createdMicros)
                : null;
        if (view != null) {
            view.start();
            metrics.watch(view);
        }
        CounterQueries counters = new CounterQueries(timeSeries, cassandra, metrics.forCounterReads(), view);
        // epoll where Netty's native library loads (Linux x86_64), else the JDK's selector
        Vertx vertx = Vertx.vertx(new VertxOptions().setPreferNativeTransport(true));
        WriteService writes = new WriteService(
                producer,
                new IdempotencyCache(config.intOf(GatewayConfig.TOKEN_CACHE)),
                kafka::up,
                config.longOf(GatewayConfig.SYNC_TIMEOUT_MS),
                metrics.forWrites(),
                ackTimeoutOn(vertx));
        GatewayHttpApi.Health health = new GatewayHttpApi.Health() {
            @Override
            public boolean kafkaUp() {
                return kafka.up();
            }

            @Override
            public String kafkaDetail() {
                return kafka.detail();
            }

            @Override
            public boolean controlPlaneUp() {
                return control.up();
            }

            @Override
            public com.fasterxml.jackson.databind.node.ObjectNode controlPlane() {
                return control.toJson();
            }
        };
        GatewayHttpApi api = new GatewayHttpApi(
                parser,
                new ReadRequests(namespaces, config),
                writes,
                timeSeries,
                new SearchRequests(namespaces, config),
                search,
                counters,
                new CounterRecount(
                        counters, timeSeries, cassandra, producer, namespaces::version, namespaces::createdMicros),
                health,
                metrics,
                config.intOf(GatewayConfig.MAX_BODY),
                new NamespaceAdminApi(
                        new NamespaceAdmin(store, catalog, name -> keyspaceLeft(cassandra, name)),
                        config.adminToken()));

        DirectEndpoints requests = api.requestHandler(vertx);
        HttpServers servers = HttpServers.start(
                vertx,
                HTTP,
                requests,
                config.get(GatewayConfig.HOST),
                config.intOf(GatewayConfig.PORT),
                config.eventLoops());
        LOG.info(
                "gateway listening on http://{}:{} ({} event loops, {} transport)",
                config.get(GatewayConfig.HOST),
                servers.port(),
                servers.size(),
                vertx.isNativeTransportEnabled() ? "native epoll" : "JDK NIO");

        Runtime.getRuntime()
                .addShutdownHook(new Thread(
                        () -> {
                            LOG.info("draining: refusing new writes, flushing the producer");
                            api.drain();
                            servers.close();
                            producer.flush();
                            producer.close();
                            timeSeries.close();
                            if (view != null) {
                                view.close();
                            }
                            kafka.close();
                            control.close();
                            feed.close();
                            vertx.close();
                            LOG.info("gateway stopped");
                        },
                        "shutdown"));
    }

    /**
     * A durable write's deadline, kept by the event loop that took the request (writes are made
     * there): no thread to wake. CompletableFuture.orTimeout woke its delayer thread to schedule
     * and again to cancel, about 13 µs of the gateway's CPU a request (profile under TimeSeries
     * writes); a Vert.x timer a write woke the loop once a write when it fired on the answered
     * write. Each loop keeps its writes' deadlines in one {@link AckDeadlines} with one timer.
     */
    static WriteService.AckTimeout ackTimeoutOn(Vertx vertx) {
        return (acks, ms) -> {
            Context context = Vertx.currentContext();
            if (context == null || !context.isEventLoopContext()) { // never in the HTTP API
                WriteService.AckTimeout.DELAYER.arm(acks, ms);
                return;
            }
            AckDeadlines deadlines = context.get(AckDeadlines.class);
            if (deadlines == null) {
                deadlines = new AckDeadlines(
                        new AckDeadlines.Timers() {
                            @Override
                            public long set(long delayMs, Runnable task) {
                                return vertx.setTimer(delayMs, id -> task.run());
                            }

                            @Override
                            public void cancel(long id) {
                                vertx.cancelTimer(id);
                            }
                        },
                        () -> System.nanoTime() / 1_000_000);
                context.put(AckDeadlines.class, deadlines);
            }
            deadlines.arm(acks, ms);
        };
    }

    private static void lookUpSchemas(RestSchemaRegistryClient registry) throws InterruptedException {
        long deadline = System.currentTimeMillis() + 60_000;
        while (true) {
            try {
                // looked up, not registered: the registry's bootstrap registers Tally's schemas, and
                // registering needs the admin token, which a data-plane server does not hold
                registry.lookup(AvroSerde.valueSubject(WriteRequestParser.COUNTER_TOPIC), TallySchemas.COUNTER_EVENT);
                registry.lookup(
                        AvroSerde.valueSubject(WriteRequestParser.TIMESERIES_TOPIC), TallySchemas.TIME_SERIES_EVENT);
                return;
            } catch (RuntimeException e) {
                if (System.currentTimeMillis() > deadline) {
                    throw e;
                }
                LOG.warn("schema registry not ready ({}); retrying", e.getMessage());
                Thread.sleep(1000);
            }
        }
    }

    /** Whether a namespace's keyspace exists (driver metadata; false when Cassandra cannot be reached). */
    static boolean keyspaceLeft(CassandraSession cassandra, String name) {
        try {
            return cassandra
                    .get()
                    .getMetadata()
                    .getKeyspace(io.tally.namespace.NamespaceName.keyspace(name))
                    .isPresent();
        } catch (RuntimeException e) {
            return false; // the provisioner still retires before it creates again
        }
    }
}
