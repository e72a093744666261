package io.tally.model.elasticsearch;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class DocumentIdsTest {
    @Test
    void idsWithoutSlashOrPercentKeepTheirPlainForm() {
        assertThat(DocumentIds.of("p1", 1_700_000_000_000_000L, "e-1")).isEqualTo("p1/1700000000000000/e-1");
    }

    @Test
    void slashesInPartsCannotMakeTwoEventsShareADocument() {
        // Joined plainly, both would be "x/1/5/t".
        String a = DocumentIds.of("x/1", 5, "t");
        String b = DocumentIds.of("x", 1, "5/t");
        assertThat(a).isNotEqualTo(b);
        assertThat(a).isEqualTo("x%2F1/5/t");
        // An escape sequence typed literally is escaped again, so it cannot pose as a slash.
        assertThat(DocumentIds.of("x%2F1", 5, "t")).isEqualTo("x%252F1/5/t").isNotEqualTo(a);
    }

    @Test
    void anIdOverTheLimitBecomesADigestThatStaysUnique() {
        String long1 = "a".repeat(300);
        String long2 = "a".repeat(299) + "b";
        String one = DocumentIds.of(long1, 7, "é".repeat(200));
        String two = DocumentIds.of(long2, 7, "é".repeat(200));
        assertThat(one.getBytes(StandardCharsets.UTF_8).length).isLessThanOrEqualTo(DocumentIds.MAX_BYTES);
        assertThat(one).startsWith("sha256:").isNotEqualTo(two);
        assertThat(DocumentIds.of(long1, 7, "é".repeat(200))).isEqualTo(one);
    }
}
