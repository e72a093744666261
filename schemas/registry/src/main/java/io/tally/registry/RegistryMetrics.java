package io.tally.registry;

import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.instrumentation.jvm.JvmMetrics;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.ByteArrayOutputStream;
import java.io.IOException;

/** The registry's Prometheus metrics, served on its own HTTP port at /metrics. */
final class RegistryMetrics {
    private final PrometheusRegistry registry = new PrometheusRegistry();
    final Counter requests;
    final Histogram latency;

    RegistryMetrics(RegistryState state) {
        requests = Counter.builder()
                .name("tally_registry_requests_total")
                .help("Registry HTTP requests by endpoint and status code")
                .labelNames("endpoint", "code")
                .register(registry);
        latency = Histogram.builder()
                .name("tally_registry_request_seconds")
                .help("Registry HTTP request latency")
                .labelNames("endpoint")
                .classicUpperBounds(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 5)
                .classicOnly()
                .register(registry);
        GaugeWithCallback.builder()
                .name("tally_registry_schemas")
                .help("Distinct schemas (ids) held")
                .callback(cb -> cb.call(state.schemaCount()))
                .register(registry);
        GaugeWithCallback.builder()
                .name("tally_registry_log_offset")
                .help("Last _schemas offset applied")
                .callback(cb -> cb.call(state.appliedOffset()))
                .register(registry);
        GaugeWithCallback.builder()
                .name("tally_registry_ignored_records")
                .help("_schemas records ignored because an earlier record won (concurrent writers)")
                .callback(cb -> cb.call(state.ignoredRecords()))
                .register(registry);
        JvmMetrics.builder().register(registry);
    }

    byte[] scrape() throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        new PrometheusTextFormatWriter(false).write(out, registry.scrape());
        return out.toByteArray();
    }
}
