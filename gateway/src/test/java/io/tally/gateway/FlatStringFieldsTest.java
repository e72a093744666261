package io.tally.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.buffer.Buffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class FlatStringFieldsTest {

    private static String[] read(String json) {
        return FlatStringFields.read(Buffer.buffer(json), "namespace", "counter_name");
    }

    @Test
    void anObjectOfTheNamedStringFieldsGivesTheirValuesInTheNamesOrder() {
        assertThat(read("{\"namespace\":\"video_views\",\"counter_name\":\"video-123\"}"))
                .containsExactly("video_views", "video-123");
        assertThat(read(" {\n \"counter_name\" : \"c\", \"namespace\":\"ns\" } "))
                .containsExactly("ns", "c");
    }

    @Test
    void escapesAndCharactersBeyondAsciiAreDecodedAsTheTreeDecodesThem() {
        assertThat(read("{\"namespace\":\"n\",\"counter_name\":\"a\\\"b\\u00e9\\ud83d\\ude00 é\"}"))
                .containsExactly("n", "a\"bé\uD83D\uDE00 é");
    }

    @Test
    void aBodyInsideALargerBufferIsReadWhereItLies() {
        Buffer whole = Buffer.buffer("xx{\"namespace\":\"n\",\"counter_name\":\"c\"}yy");
        assertThat(FlatStringFields.read(whole.slice(2, whole.length() - 2), "namespace", "counter_name"))
                .containsExactly("n", "c");
    }

    /** Every other body is left to the tree, which refuses it with its code and field. */
    @ParameterizedTest
    @ValueSource(
            strings = {
                "",
                "{not json",
                "[]",
                "\"namespace\"",
                "{}",
                "{\"namespace\":\"n\"}",
                "{\"namespace\":\"n\",\"counter_name\":\"c\",\"delta\":1}",
                "{\"namespace\":\"n\",\"counter\":\"c\"}",
                "{\"namespace\":\"n\",\"counter_name\":1}",
                "{\"namespace\":null,\"counter_name\":\"c\"}",
                "{\"namespace\":\"n\",\"counter_name\":{\"a\":\"b\"}}",
                "{\"namespace\":\"n\",\"counter_name\":[\"c\"]}",
                "{\"namespace\":\"n\",\"namespace\":\"m\",\"counter_name\":\"c\"}",
                "{\"namespace\":\"n\",\"counter_name\":\"c\"} {}",
                "{\"namespace\":\"n\",\"counter_name\":\"c\"",
                "{\"namespace\":\"n\",\"counter_name\":\"c\",}",
            })
    void anythingElseIsNull(String body) {
        assertThat(read(body)).isNull();
    }
}
