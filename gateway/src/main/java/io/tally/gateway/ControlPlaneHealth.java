package io.tally.gateway;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.tally.gateway.service.NamespaceStore;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Whether the control plane can take changes: Postgres answers and the Debezium connector and
 * its task run in Kafka Connect. Probed in the background, so /healthz never waits on them.
 * "degraded" does not stop the data plane: it serves with the last known configs.
 */
final class ControlPlaneHealth implements AutoCloseable {
    private static final ObjectMapper JSON = new ObjectMapper();
    private final NamespaceStore store;
    private final String connectorStatusUrl;
    private final ControlPlaneFeed feed;
    private final HttpClient http =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    private final ScheduledExecutorService probe = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "control-plane-health");
        t.setDaemon(true);
        return t;
    });
    private volatile String postgres = "UNKNOWN";
    /** The probe's own connection, kept between probes; only the probe thread touches it. */
    private Connection kept;

    private volatile String connect = "UNKNOWN";

    ControlPlaneHealth(NamespaceStore store, String connectUrl, String connector, ControlPlaneFeed feed) {
        this.store = store;
        this.connectorStatusUrl = connectUrl + "/connectors/" + connector + "/status";
        this.feed = feed;
    }

    void start(Duration every) {
        probe.scheduleWithFixedDelay(this::check, 0, every.toMillis(), TimeUnit.MILLISECONDS);
    }

    boolean up() {
        return "UP".equals(postgres) && "RUNNING".equals(connect) && feed.caughtUp();
    }

    ObjectNode toJson() {
        return JSON.createObjectNode()
                .put("status", up() ? "UP" : "DEGRADED")
                .put("postgres", postgres)
                .put("connect", connect)
                .put("replayed", feed.caughtUp())
                .put("changes_applied", feed.applied());
    }

    private void check() {
        postgres = probePostgres();
        try {
            HttpResponse<String> r = http.send(
                    HttpRequest.newBuilder(URI.create(connectorStatusUrl))
                            .timeout(Duration.ofSeconds(2))
                            .GET()
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            if (r.statusCode() != 200) {
                connect = "DOWN: HTTP " + r.statusCode();
            } else {
                JsonNode st = JSON.readTree(r.body());
                String state = st.path("connector").path("state").asText("UNKNOWN");
                for (JsonNode t : st.path("tasks")) {
                    if (!"RUNNING".equals(t.path("state").asText())) {
                        state = "TASK_" + t.path("state").asText("UNKNOWN");
                    }
                }
                connect = st.path("tasks").isEmpty() ? "NO_TASKS" : state;
            }
        } catch (Exception e) {
            connect = "DOWN: " + firstLine(String.valueOf(e.getMessage()));
        }
    }

    /**
     * UP when Postgres answers now: the kept connection's round trip ({@code isValid}), or, when
     * that connection broke (Postgres restarted, the socket died), a new one's. A new connection
     * every probe cost Postgres a forked backend and the gateway a SCRAM handshake every 2 s, at
     * rest; a dead kept connection still reads as DOWN only if a fresh one fails too.
     */
    private String probePostgres() {
        try {
            if (kept != null && kept.isValid(2)) {
                return "UP";
            }
        } catch (SQLException e) {
            // a broken connection: opened afresh below
        }
        closeKept();
        try {
            Connection c = store.connect();
            if (c.isValid(2)) {
                kept = c;
                return "UP";
            }
            c.close();
            return "DOWN";
        } catch (Exception e) {
            return "DOWN: " + firstLine(e.getMessage());
        }
    }

    private void closeKept() {
        if (kept != null) {
            try {
                kept.close();
            } catch (SQLException e) {
                // already broken: nothing to release
            }
            kept = null;
        }
    }

    private static String firstLine(String s) {
        return s == null ? "" : s.lines().findFirst().orElse("");
    }

    @Override
    public void close() {
        probe.shutdownNow();
        try {
            probe.awaitTermination(3, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        closeKept();
    }
}
