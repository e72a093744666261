package io.tally.jobs.elasticsearch;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class BulkBodyTest {
    private static String text(BulkBody b) {
        return new String(b.array(), 0, b.bytes(), StandardCharsets.UTF_8);
    }

    private static Map<String, Object> doc(Object... kv) {
        Map<String, Object> m = new LinkedHashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            m.put((String) kv[i], kv[i + 1]);
        }
        return m;
    }

    @Test
    void eachDocumentIsAnActionLineAndItsSourceLine() {
        BulkBody b = new BulkBody();
        b.index("tally-a-20261201", "id-1", doc("time_series_id", "s1", "event_time", 1700000000000L, "ok", true));
        b.index("tally-a-20261201", "id\"2", doc("price", 1.5));

        assertThat(text(b))
                .isEqualTo("{\"index\":{\"_index\":\"tally-a-20261201\",\"_id\":\"id-1\"}}\n"
                        + "{\"time_series_id\":\"s1\",\"event_time\":1700000000000,\"ok\":true}\n"
                        + "{\"index\":{\"_index\":\"tally-a-20261201\",\"_id\":\"id\\\"2\"}}\n"
                        + "{\"price\":1.5}\n");
        assertThat(b.actions()).isEqualTo(2);
        assertThat(b.bytes()).isEqualTo(text(b).getBytes(StandardCharsets.UTF_8).length);
    }

    @Test
    void aBodyOfSomeActionsCarriesThoseActionsWhole() {
        BulkBody b = new BulkBody();
        for (int i = 0; i < 100; i++) { // past the first growth of the offsets
            b.index("i", "id-" + i, doc("n", i));
        }

        BulkBody again = b.only(List.of(1, 99));

        assertThat(again.actions()).isEqualTo(2);
        assertThat(text(again))
                .isEqualTo("{\"index\":{\"_index\":\"i\",\"_id\":\"id-1\"}}\n{\"n\":1}\n"
                        + "{\"index\":{\"_index\":\"i\",\"_id\":\"id-99\"}}\n{\"n\":99}\n");
    }

    @Test
    void textIsWrittenAsUtf8() {
        BulkBody b = new BulkBody();
        b.index("i", "é", doc("name", "naïve ☃"));

        assertThat(text(b)).contains("\"_id\":\"é\"").contains("{\"name\":\"naïve ☃\"}");
        assertThat(b.isEmpty()).isFalse();
        assertThat(new BulkBody().isEmpty()).isTrue();
    }
}
