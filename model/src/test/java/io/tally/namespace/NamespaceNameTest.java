package io.tally.namespace;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Random;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

class NamespaceNameTest {
    /** The rule as the docs state it; the class checks it by hand. */
    private static final Pattern RULE = Pattern.compile("[a-z][a-z0-9_.]{0,39}");

    private static boolean byRule(String name) {
        return name != null && RULE.matcher(name).matches() && !name.contains("..") && !name.endsWith(".");
    }

    @Test
    void acceptsExactlyWhatTheRuleAccepts() {
        String alphabet = "az09_.A-Z/ é\u0000";
        Random random = new Random(11);
        for (int i = 0; i < 200_000; i++) {
            int n = random.nextInt(44);
            StringBuilder sb = new StringBuilder(n);
            for (int k = 0; k < n; k++) {
                // mostly safe characters, so long valid names are common too
                sb.append(
                        random.nextInt(4) > 0
                                ? (char) ('a' + random.nextInt(26))
                                : alphabet.charAt(random.nextInt(alphabet.length())));
            }
            String name = sb.toString();
            assertThat(NamespaceName.isSafe(name)).as("'%s'", name).isEqualTo(byRule(name));
        }
    }

    @Test
    void edgeCases() {
        for (String name : List.of("a", "a.b", "a_b.c9", "video_views", "a".repeat(40))) {
            assertThat(NamespaceName.isSafe(name)).as(name).isTrue();
        }
        for (String name : List.of("", "a..b", "a.", "_a", "9a", ".a", "A", "a-b", "a".repeat(41), "ns\u0000")) {
            assertThat(NamespaceName.isSafe(name)).as(name).isFalse();
        }
        assertThat(NamespaceName.isSafe(null)).isFalse();
    }
}
