package io.tally.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.buffer.Buffer;
import java.nio.charset.StandardCharsets;
import java.util.Random;
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

    private static String[] plain(String json) {
        byte[] b = json.getBytes(StandardCharsets.UTF_8);
        return FlatStringFields.plain(b, 0, b.length, "namespace", "counter_name");
    }

    @Test
    void thePlainScanReadsTheCommonBody() {
        assertThat(plain("{\"namespace\":\"video_views\",\"counter_name\":\"video-123\"}"))
                .containsExactly("video_views", "video-123");
        assertThat(plain("\t{\r\n \"counter_name\" : \"c d\" ,\"namespace\":\"ns\" }\n"))
                .containsExactly("ns", "c d");
    }

    /** What the scan is not sure of goes to Jackson: escapes, bytes beyond printable ASCII. */
    @ParameterizedTest
    @ValueSource(
            strings = {
                "{\"namespace\":\"n\",\"counter_name\":\"a\\\"b\"}",
                "{\"namespace\":\"n\",\"counter_name\":\"\\u0063\"}",
                "{\"namespace\":\"n\",\"counter_name\":\"é\"}",
                "\ufeff{\"namespace\":\"n\",\"counter_name\":\"c\"}",
                "{\"namespace\":\"n\",\"counter_name\":\"c\u0001\"}",
                "{\"namespace\":\"n\",\"counter_name\":\"c\u007f\"}",
            })
    void thePlainScanLeavesEscapesAndOtherBytesToJackson(String body) {
        assertThat(plain(body)).isNull();
        assertThat(read(body)).isEqualTo(FlatStringFields.parsed(Buffer.buffer(body), "namespace", "counter_name"));
    }

    /**
     * The scan answers only what Jackson answers the same: bodies made by cutting, doubling and
     * changing bytes of common ones, each read both ways.
     */
    @Test
    void thePlainScanNeverAnswersOtherwiseThanJackson() {
        String[] seeds = {
            "{\"namespace\":\"video_views\",\"counter_name\":\"video-123\"}",
            " { \"counter_name\" : \"c\" , \"namespace\" : \"n\" } ",
        };
        byte[] alphabet = "{}[]\":, \t\n\\nuex01\u00e9".getBytes(StandardCharsets.UTF_8);
        Random random = new Random(27);
        int answered = 0;
        for (int round = 0; round < 20_000; round++) {
            byte[] b = seeds[round % seeds.length].getBytes(StandardCharsets.UTF_8);
            for (int edits = 1 + random.nextInt(2); edits > 0; edits--) {
                b = mutate(b, random, alphabet);
            }
            String[] plain = FlatStringFields.plain(b, 0, b.length, "namespace", "counter_name");
            if (plain != null) {
                answered++;
                assertThat(FlatStringFields.parsed(Buffer.buffer(b), "namespace", "counter_name"))
                        .as(new String(b, StandardCharsets.UTF_8))
                        .containsExactly(plain);
            }
        }
        assertThat(answered).as("bodies the scan answered").isGreaterThan(1_000);
    }

    private static byte[] mutate(byte[] b, Random random, byte[] alphabet) {
        int at = random.nextInt(b.length);
        byte c = alphabet[random.nextInt(alphabet.length)];
        return switch (random.nextInt(3)) {
            case 0 -> { // cut a byte
                byte[] out = new byte[b.length - 1];
                System.arraycopy(b, 0, out, 0, at);
                System.arraycopy(b, at + 1, out, at, b.length - at - 1);
                yield out;
            }
            case 1 -> { // put one in
                byte[] out = new byte[b.length + 1];
                System.arraycopy(b, 0, out, 0, at);
                out[at] = c;
                System.arraycopy(b, at, out, at + 1, b.length - at);
                yield out;
            }
            default -> { // change one
                byte[] out = b.clone();
                out[at] = c;
                yield out;
            }
        };
    }
}
