package io.tally.jobs.elasticsearch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class BulkOutcomeTest {
    private static BulkOutcome parse(String json) throws IOException {
        byte[] b = json.getBytes(StandardCharsets.UTF_8);
        return BulkOutcome.parse(b, b.length);
    }

    @Test
    void anAnswerWithoutErrorsIsDone() throws IOException {
        assertThat(parse("{\"errors\":false,\"items\":[{\"index\":{\"status\":201}}]}")
                        .done())
                .isTrue();
        assertThat(parse("{\"took\":3,\"errors\":false}").done()).isTrue();
    }

    @Test
    void busyItemsGoAgainAndRefusedOnesAreNamed() throws IOException {
        BulkOutcome o = parse("{\"errors\":true,\"items\":["
                + "{\"index\":{\"status\":201}},"
                + "{\"index\":{\"status\":429,\"error\":{\"type\":\"es_rejected_execution_exception\",\"reason\":\"queue full\"}}},"
                + "{\"index\":{\"status\":400,\"error\":{\"type\":\"mapper_parsing_exception\",\"reason\":\"failed to parse field [n]\","
                + "\"caused_by\":{\"type\":\"x\"}}}},"
                + "{\"index\":{\"status\":503,\"error\":{\"type\":\"unavailable_shards_exception\",\"reason\":\"primary shard is not active\"}}},"
                + "{\"index\":{\"status\":200}}]}");

        assertThat(o.done()).isFalse();
        assertThat(o.retry()).containsExactly(1, 3);
        assertThat(o.refused())
                .containsExactly("action 2: HTTP 400 mapper_parsing_exception: failed to parse field [n]");
    }

    @Test
    void whatIsNoBulkAnswerIsAnError() {
        assertThatThrownBy(() -> parse("[1,2]")).isInstanceOf(IOException.class);
        assertThatThrownBy(() -> parse("{\"errors\":true,\"items\":[{\"index\":"))
                .isInstanceOf(IOException.class);
    }
}
