package io.tally.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.tally.gateway.service.CounterQueries.Count;
import io.tally.gateway.service.NamespaceResolver;
import io.tally.gateway.service.ServiceException;
import io.tally.gateway.service.TimeSeriesQueries;
import io.tally.model.Micros;
import io.tally.namespace.NamespaceCatalog;
import io.tally.namespace.NamespaceConfig.CounterType;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class ReadRequestsTest {
    static final ObjectMapper JSON = new ObjectMapper();

    static ReadRequests reads() throws Exception {
        NamespaceCatalog catalog = NamespaceCatalog.fromDirectory(Path.of("../infra/namespaces"));
        return new ReadRequests(new NamespaceResolver(catalog), GatewayConfig.from(Map.of(), new String[0]));
    }

    /** The bytes are what Jackson writes for the same tree, so the answer's contract is unchanged. */
    @ParameterizedTest
    @CsvSource({
        "0, EVENTUAL, 0",
        "42, ACCURATE, 1733390000123456",
        "-7, BEST_EFFORT, 1",
        "9223372036854775807, EVENTUAL, 1733390000000000",
        "-9223372036854775808, ACCURATE, 0",
    })
    void aCountIsWrittenAsJacksonWritesItsTree(long count, CounterType type, long rollupMicros) throws Exception {
        ObjectNode tree = JSON.createObjectNode().put("count", count).put("counter_type", type.name());
        if (rollupMicros > 0) {
            tree.put("last_rollup_ts", Micros.format(rollupMicros));
        } else {
            tree.putNull("last_rollup_ts");
        }
        assertThat(ReadRequests.count(new Count(count, type, rollupMicros)).toString(StandardCharsets.UTF_8))
                .isEqualTo(JSON.writeValueAsString(tree));
    }

    /**
     * A page is written as the tree it replaced wrote it: the same fields in the same order, item
     * values base64 with padding as java.util.Base64 writes them, strings escaped, the token when
     * there is one.
     */
    @Test
    void aPageIsWrittenAsJacksonWritesItsTree() throws Exception {
        byte[] binary = new byte[256];
        for (int i = 0; i < binary.length; i++) {
            binary[i] = (byte) i;
        }
        var events = List.of(
                new TimeSeriesQueries.Event(
                        1_733_390_000_123_456L,
                        "id \"quoted\" \u00e9\u4e2d",
                        List.of(
                                Map.entry("deviceType", "ios".getBytes(StandardCharsets.UTF_8)),
                                Map.entry("raw", binary))),
                new TimeSeriesQueries.Event(
                        1, "e\n2", List.of(Map.entry("k", new byte[0]), Map.entry("k1", new byte[] {-1}))),
                new TimeSeriesQueries.Event(1_733_390_000_000_000L, "e3", List.of()));
        for (String token : new String[] {null, "tok-en_1"}) {
            for (var page : List.of(
                    new TimeSeriesQueries.EventPage(events, token),
                    new TimeSeriesQueries.EventPage(List.of(), token))) {
                ObjectNode tree = JSON.createObjectNode();
                ArrayNode list = tree.putArray("events");
                for (TimeSeriesQueries.Event e : page.events()) {
                    ObjectNode ev = list.addObject()
                            .put("timeSeriesId", "ts/\"1\"")
                            .put("eventTime", Micros.format(e.timeMicros()))
                            .put("eventId", e.eventId());
                    ArrayNode items = ev.putArray("eventItems");
                    for (Map.Entry<String, byte[]> it : e.items()) {
                        items.addObject()
                                .put("eventItemKey", it.getKey())
                                .put("eventItemValue", Base64.getEncoder().encodeToString(it.getValue()));
                    }
                }
                if (token != null) {
                    tree.put("nextPageToken", token);
                }
                assertThat(ReadRequests.page("ts/\"1\"", page).toString(StandardCharsets.UTF_8))
                        .isEqualTo(JSON.writeValueAsString(tree));
                assertThat(new String(ReadRequests.pageBytes("ts/\"1\"", page), StandardCharsets.UTF_8))
                        .isEqualTo(JSON.writeValueAsString(tree));
            }
        }
    }

    @Test
    void flatFieldsAreCheckedAsTheTreesAre() throws Exception {
        ReadRequests reads = reads();
        assertThat(reads.counter("video_views", "v-1").counter()).isEqualTo("v-1");
        assertThat(reads.counter("video_views", "v-1").namespace().name()).isEqualTo("video_views");
        String[][] bad = {
            {"Bad Name", "c", "INVALID_NAME", "namespace"},
            {"nope", "c", "UNKNOWN_NAMESPACE", "namespace"},
            {"playback", "c", "WRONG_NAMESPACE_KIND", "namespace"},
            {"", "c", "INVALID_FIELD", "namespace"},
            {"video_views", "", "INVALID_FIELD", "counter_name"},
            {"video_views", "a\u0001b", "INVALID_FIELD", "counter_name"},
            {"video_views", "x".repeat(100_000), "FIELD_TOO_LONG", "counter_name"},
        };
        for (String[] b : bad) {
            for (boolean flat : new boolean[] {true, false}) {
                ObjectNode body = JSON.createObjectNode().put("namespace", b[0]).put("counter_name", b[1]);
                assertThatThrownBy(() -> {
                            if (flat) {
                                reads.counter(b[0], b[1]);
                            } else {
                                reads.counter(body);
                            }
                        })
                        .as("%s %s", b[2], flat ? "flat" : "tree")
                        .isInstanceOfSatisfying(ServiceException.class, e -> {
                            assertThat(e.code()).isEqualTo(b[2]);
                            assertThat(e.field()).isEqualTo(b[3]);
                        });
            }
        }
    }
}
