package io.tally.gateway;

import io.prometheus.metrics.core.datapoints.CounterDataPoint;
import io.prometheus.metrics.core.datapoints.DistributionDataPoint;
import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.instrumentation.jvm.JvmMetrics;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.tally.gateway.service.CounterQueries;
import io.tally.gateway.service.CounterView;
import io.tally.gateway.service.WriteService;
import io.tally.namespace.NamespaceConfig;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The gateway's Prometheus metrics (names from docs/design.md) plus the JVM's. Without exemplars
 * (no tracer's spans to name), and the series a request touches are looked up once and kept: a
 * label lookup hashes a list of strings, and a GetCount touched three series.
 */
final class GatewayMetrics {
    private final PrometheusRegistry registry = new PrometheusRegistry();
    final Counter requests;
    final Histogram requestSeconds;
    final Histogram produceSeconds;
    final Counter produceFailures;
    final Counter eventsAccepted;
    final Histogram rollupLagSeconds;
    final Counter dedupHits;
    final Counter controlChanges;
    private final Counter readCache;
    private final CounterDataPoint addAndGetFromView;
    private final CounterDataPoint addAndGetFromCassandra;

    GatewayMetrics() {
        requests = Counter.builder()
                .name("tally_gateway_requests_total")
                .help("Gateway requests by endpoint and HTTP code")
                .labelNames("endpoint", "code")
                .withoutExemplars()
                .register(registry);
        // classic buckets only: the text format Prometheus scrapes carries no native histogram, and
        // keeping one too was a map lookup in every observation (1.5% of the samples under AddCount)
        requestSeconds = Histogram.builder()
                .name("tally_gateway_request_seconds")
                .help("Gateway request latency")
                .labelNames("endpoint")
                .classicUpperBounds(0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 5)
                .classicOnly()
                .withoutExemplars()
                .register(registry);
        produceSeconds = Histogram.builder()
                .name("tally_produce_seconds")
                .help("Time from send to Kafka's acknowledgement")
                .classicUpperBounds(0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 5)
                .classicOnly()
                .withoutExemplars()
                .register(registry);
        produceFailures = Counter.builder()
                .name("tally_produce_failures_total")
                .help("Records Kafka did not acknowledge (after the producer's retries)")
                .withoutExemplars()
                .register(registry);
        eventsAccepted = Counter.builder()
                .name("tally_gateway_events_total")
                .help("Events accepted, by topic")
                .labelNames("topic")
                .withoutExemplars()
                .register(registry);
        rollupLagSeconds = Histogram.builder()
                .name("tally_counter_rollup_lag_seconds")
                .help("now - last_rollup_ts of the counters GetCount read, by counter type")
                .labelNames("counter_type")
                .classicUpperBounds(0.5, 1, 2, 5, 7.5, 10, 15, 30, 60, 300, 3600)
                .classicOnly()
                .withoutExemplars()
                .register(registry);
        dedupHits = Counter.builder()
                .name("tally_gateway_dedup_hits_total")
                .help("Writes whose idempotency key the gateway had seen with the same payload (retries)")
                .withoutExemplars()
                .register(registry);
        controlChanges = Counter.builder()
                .name("tally_control_plane_changes_total")
                .help("Namespace changes the gateway applied from the control topic, by kind")
                .labelNames("kind")
                .withoutExemplars()
                .register(registry);
        readCache = Counter.builder()
                .name("tally_gateway_read_cache_total")
                .help("ReadEventRecords pages behind the writer's stored horizon, by whether the cache had them"
                        + " (hit) or Cassandra was read (miss)")
                .labelNames("result")
                .withoutExemplars()
                .register(registry);
        Counter addAndGet = Counter.builder()
                .name("tally_gateway_add_and_get_total")
                .help("AddAndGetCount answers by where their count came from: the counter view (view) or the"
                        + " rollup row and event log in Cassandra (cassandra)")
                .labelNames("source")
                .withoutExemplars()
                .register(registry);
        addAndGetFromView = addAndGet.labelValues("view");
        addAndGetFromCassandra = addAndGet.labelValues("cassandra");
        JvmMetrics.builder().register(registry);
    }

    /** One AddAndGetCount answered: from the counter view (true) or from Cassandra. */
    void addAndGet(boolean fromView) {
        (fromView ? addAndGetFromView : addAndGetFromCassandra).inc();
    }

    /** One read behind the stored horizon: "hit" or "miss". */
    void readCache(String result) {
        readCache.labelValues(result).inc();
    }

    /** One endpoint's series: its latency, and its request count by HTTP code (made when first used). */
    private final class EndpointSeries {
        final DistributionDataPoint seconds;
        final CounterDataPoint[] byCode = new CounterDataPoint[600];
        final String endpoint;

        EndpointSeries(String endpoint) {
            this.endpoint = endpoint;
            this.seconds = requestSeconds.labelValues(endpoint);
        }

        CounterDataPoint code(int code) {
            if (code < 0 || code >= byCode.length) {
                return requests.labelValues(endpoint, String.valueOf(code));
            }
            CounterDataPoint c = byCode[code];
            // a plain array read by every event loop: a race asks labelValues twice and gets the one
            // series it keeps, and a data point's fields are final, so one seen through a race is whole
            if (c == null) {
                c = requests.labelValues(endpoint, String.valueOf(code));
                byCode[code] = c;
            }
            return c;
        }
    }

    private final Map<String, EndpointSeries> endpoints = new ConcurrentHashMap<>();
    private final Map<String, CounterDataPoint> eventsByTopic = new ConcurrentHashMap<>();
    private final DistributionDataPoint[] lagByType =
            new DistributionDataPoint[NamespaceConfig.CounterType.values().length];

    /** A request answered: tally_gateway_requests_total and tally_gateway_request_seconds. */
    void request(String endpoint, int code, double seconds) {
        EndpointSeries s = endpoints.computeIfAbsent(endpoint, EndpointSeries::new);
        s.code(code).inc();
        s.seconds.observe(seconds);
    }

    /** A 0/1 gauge read at scrape time. */
    void gauge(String name, String help, java.util.function.BooleanSupplier value) {
        io.prometheus.metrics.core.metrics.GaugeWithCallback.builder()
                .name(name)
                .help(help)
                .callback(cb -> cb.call(value.getAsBoolean() ? 1 : 0))
                .register(registry);
    }

    byte[] scrape() throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        new PrometheusTextFormatWriter(false).write(out, registry.scrape());
        return out.toByteArray();
    }

    /** What the write service counts, on these metrics. */
    WriteService.Metrics forWrites() {
        return new WriteService.Metrics() {
            @Override
            public void dedupHit() {
                dedupHits.inc();
            }

            @Override
            public void accepted(String topic, int records) {
                eventsByTopic
                        .computeIfAbsent(topic, eventsAccepted::labelValues)
                        .inc(records);
            }
        };
    }

    /** What the counter reads report, on these metrics. */
    CounterQueries.Metrics forCounterReads() {
        for (NamespaceConfig.CounterType type : NamespaceConfig.CounterType.values()) {
            lagByType[type.ordinal()] = rollupLagSeconds.labelValues(type.name());
        }
        return (type, seconds) -> lagByType[type.ordinal()].observe(seconds);
    }

    /** The counter view's size and whether its rebuild reached the topic's end (gauges read at scrape time). */
    void watch(CounterView view) {
        GaugeWithCallback.builder()
                .name("tally_gateway_counter_view_counters")
                .help("Counters the in-memory counter view holds")
                .callback(cb -> cb.call(view.size()))
                .register(registry);
        GaugeWithCallback.builder()
                .name("tally_gateway_counter_view_caught_up")
                .help("1 once the counter view was rebuilt from tally.counter.rollups up to its end at start")
                .callback(cb -> cb.call(view.caughtUp() ? 1 : 0))
                .register(registry);
        io.prometheus.metrics.core.metrics.CounterWithCallback.builder()
                .name("tally_gateway_counter_view_applied_total")
                .help("Rollups the counter view applied from tally.counter.rollups")
                .callback(cb -> cb.call(view.applied()))
                .register(registry);
    }
}
