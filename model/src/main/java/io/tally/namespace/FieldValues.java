package io.tally.namespace;

import io.tally.namespace.NamespaceConfig.FieldType;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;

/**
 * An event item's value as the type its namespace's field_mapping gives it: the gateway checks
 * writes with it (400 naming the item), the indexer converts stored items with it and the search
 * API converts query values the same way, so a query means what was indexed. A value is of a
 * type only if Elasticsearch would store it as that type: INTEGER within 32 bits, DOUBLE finite,
 * KEYWORD within Lucene's term limit, DATE in the mapping's default format
 * (strict_date_optional_time or epoch_millis), BOOLEAN true or false.
 */
public final class FieldValues {
    /** Lucene refuses a longer term, so Elasticsearch refuses the whole document. */
    public static final int MAX_KEYWORD_BYTES = 32_766;

    private FieldValues() {}

    /** The value converted to the type, or null when it is not of the type ({@link #whyNot} says why). */
    public static Object convert(FieldType type, String text) {
        return whyNot(type, text) == null ? parse(type, text.trim()) : null;
    }

    /** Null when the text is a value of the type, else why not (for an error message). */
    public static String whyNot(FieldType type, String text) {
        String t = text.trim();
        return switch (type) {
            case TEXT -> null;
            case KEYWORD -> t.getBytes(StandardCharsets.UTF_8).length > MAX_KEYWORD_BYTES
                    ? "a KEYWORD is at most " + MAX_KEYWORD_BYTES + " bytes of UTF-8"
                    : null;
            case INTEGER -> {
                Long v = parseLong(t);
                yield v == null || v < Integer.MIN_VALUE || v > Integer.MAX_VALUE
                        ? "an INTEGER is a whole number from " + Integer.MIN_VALUE + " to " + Integer.MAX_VALUE
                        : null;
            }
            case LONG -> parseLong(t) == null ? "a LONG is a whole number within 64 bits" : null;
            case DOUBLE -> {
                Double v = parseDouble(t);
                yield v == null || !Double.isFinite(v) ? "a DOUBLE is a finite decimal number" : null;
            }
            case BOOLEAN -> t.equalsIgnoreCase("true") || t.equalsIgnoreCase("false")
                    ? null
                    : "a BOOLEAN is true or false";
            case DATE -> isDate(t)
                    ? null
                    : "a DATE is an ISO-8601 date or date-time (2026-11-23, 2026-11-23T10:15:30Z) or epoch milliseconds";
        };
    }

    private static Object parse(FieldType type, String t) {
        return switch (type) {
            case KEYWORD, TEXT, DATE -> t;
            case INTEGER, LONG -> Long.parseLong(t);
            case DOUBLE -> Double.parseDouble(t);
            case BOOLEAN -> Boolean.valueOf(t.equalsIgnoreCase("true"));
        };
    }

    private static Long parseLong(String t) {
        try {
            return Long.parseLong(t);
        } catch (NumberFormatException e) {
            return null;
        }
    }

    /** Plain decimal notation only: Java's hex floats and f/d suffixes are not JSON numbers. */
    private static Double parseDouble(String t) {
        if (t.isEmpty() || !t.matches("[+-]?(\\d+\\.?\\d*|\\.\\d+)([eE][+-]?\\d+)?")) {
            return null;
        }
        return Double.parseDouble(t);
    }

    private static boolean isDate(String t) {
        if (t.matches("-?\\d{1,18}")) {
            return true; // epoch_millis
        }
        for (java.util.function.Consumer<String> parser : DATE_PARSERS) {
            try {
                parser.accept(t);
                return true;
            } catch (DateTimeParseException e) {
                // try the next form
            }
        }
        return false;
    }

    private static final java.util.List<java.util.function.Consumer<String>> DATE_PARSERS =
            java.util.List.of(Instant::parse, OffsetDateTime::parse, LocalDateTime::parse, LocalDate::parse);
}
