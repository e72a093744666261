package io.tally.namespace;

import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Durations as the articles write them: "5s", "518400s", "250ms", "2m", "1h", "7d". */
public final class Durations {
    private static final Pattern FORMAT = Pattern.compile("(\\d{1,12})(ms|s|m|h|d)");

    private Durations() {}

    public static Duration parse(String raw, String field) {
        Matcher m = raw == null ? null : FORMAT.matcher(raw.trim());
        if (m == null || !m.matches()) {
            throw new InvalidConfigException(field, "'" + raw + "' is not a duration like 5s, 250ms, 2m, 1h or 7d");
        }
        long n = Long.parseLong(m.group(1));
        return switch (m.group(2)) {
            case "ms" -> Duration.ofMillis(n);
            case "s" -> Duration.ofSeconds(n);
            case "m" -> Duration.ofMinutes(n);
            case "h" -> Duration.ofHours(n);
            default -> Duration.ofDays(n);
        };
    }
}
