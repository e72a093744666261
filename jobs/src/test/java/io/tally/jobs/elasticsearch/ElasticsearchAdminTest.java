package io.tally.jobs.elasticsearch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpServer;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Which answers count as done: a canned HTTP server answers each path with a fixed status. */
class ElasticsearchAdminTest {
    static final Map<String, Integer> STATUS =
            Map.of("/ok", 200, "/gone", 404, "/exists", 400, "/bad", 400, "/down", 503);
    HttpServer server;
    final List<String> calls = new ArrayList<>();
    ElasticsearchAdmin es;

    @BeforeEach
    void start() throws Exception {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/", x -> {
            String path = x.getRequestURI().getPath();
            calls.add(x.getRequestMethod() + " " + path + " "
                    + new String(x.getRequestBody().readAllBytes(), StandardCharsets.UTF_8) + " "
                    + x.getRequestHeaders().getFirst("Content-Type"));
            byte[] body = (path.equals("/exists")
                            ? "{\"error\":{\"type\":\"resource_already_exists_exception\"}}"
                            : "{\"error\":\"x\"}")
                    .getBytes(StandardCharsets.UTF_8);
            x.sendResponseHeaders(STATUS.getOrDefault(path, 500), body.length);
            x.getResponseBody().write(body);
            x.close();
        });
        server.start();
        es = new ElasticsearchAdmin(ElasticsearchEndpoint.of(
                "http://127.0.0.1:" + server.getAddress().getPort()));
    }

    @AfterEach
    void stop() {
        server.stop(0);
    }

    @Test
    void putSendsJsonAndNeedsA2xx() throws Exception {
        es.put("/ok", "{\"a\":1}");
        assertThat(calls).containsExactly("PUT /ok {\"a\":1} application/json");
        assertThatThrownBy(() -> es.put("/gone", "{}")).hasMessageContaining("PUT /gone: HTTP 404");
        assertThatThrownBy(() -> es.put("/exists", "{}")).hasMessageContaining("HTTP 400");
    }

    @Test
    void createIsDoneWhenTheIndexExistsButNotOnOtherBadRequests() throws Exception {
        es.create("/exists", "{}");
        assertThatThrownBy(() -> es.create("/bad", "{}")).hasMessageContaining("PUT /bad: HTTP 400");
    }

    @Test
    void deleteAndPutOnExistingAreDoneWhenNothingMatches() throws Exception {
        es.delete("/gone");
        es.putOnExisting("/gone", "{}");
        assertThat(calls.get(0)).startsWith("DELETE /gone");
        assertThatThrownBy(() -> es.delete("/down")).hasMessageContaining("DELETE /down: HTTP 503");
    }
}
