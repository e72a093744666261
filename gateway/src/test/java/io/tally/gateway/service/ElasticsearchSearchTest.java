package io.tally.gateway.service;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.sun.net.httpserver.HttpServer;
import io.tally.common.ElasticsearchClientSecurity;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The retry of a 503, against an HTTP server that answers a script of statuses. */
class ElasticsearchSearchTest {
    private static final String HITS = "{\"hits\":{\"hits\":[]}}";
    private static final String ALL_SHARDS_FAILED =
            "{\"error\":{\"type\":\"search_phase_execution_exception\",\"reason\":\"all shards failed\"},\"status\":503}";

    private HttpServer server;
    private final Deque<Integer> statuses = new ConcurrentLinkedDeque<>();
    /** Requests the server took, counted on its own thread. */
    private final AtomicInteger asked = new AtomicInteger();

    private ElasticsearchSearch searchAnswering(List<Integer> script) throws Exception {
        statuses.addAll(script);
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.createContext("/", exchange -> {
            asked.incrementAndGet();
            int status = statuses.isEmpty() ? 200 : statuses.poll();
            byte[] body = (status == 200 ? HITS : ALL_SHARDS_FAILED).getBytes(StandardCharsets.UTF_8);
            exchange.sendResponseHeaders(status, body.length);
            exchange.getResponseBody().write(body);
            exchange.close();
        });
        server.start();
        String url = "http://127.0.0.1:" + server.getAddress().getPort();
        return new ElasticsearchSearch(url, ElasticsearchClientSecurity.NONE, new long[] {1, 1, 1});
    }

    @AfterEach
    void stop() {
        if (server != null) {
            server.stop(0);
        }
    }

    @Test
    void aShardStillStartingIsAskedAgainAndAnswers() throws Exception {
        ElasticsearchSearch search = searchAnswering(List.of(503, 503));
        assertThat(search.search("tally-playback", JsonNodeFactory.instance.objectNode())
                        .path("hits")
                        .isObject())
                .isTrue();
        assertThat(asked.get()).isEqualTo(3);
    }

    @Test
    void aClusterThatStaysUnavailableIsUnavailableAfterTheRetries() throws Exception {
        ElasticsearchSearch search = searchAnswering(List.of(503, 503, 503, 503, 503));
        assertThatThrownBy(() -> search.search("tally-playback", JsonNodeFactory.instance.objectNode()))
                .isInstanceOf(ServiceException.class)
                .hasMessageContaining("503");
        assertThat(asked.get()).isEqualTo(4); // the first ask and its three retries
    }

    @Test
    void otherFailuresAreNotRetried() throws Exception {
        ElasticsearchSearch search = searchAnswering(List.of(400));
        assertThatThrownBy(() -> search.search("tally-playback", JsonNodeFactory.instance.objectNode()))
                .isInstanceOf(ServiceException.class)
                .hasMessageContaining("400");
        assertThat(asked.get()).isEqualTo(1);
    }
}
