package io.tally.model;

import java.time.Instant;

/**
 * Event times are microseconds since the epoch everywhere in Tally (Avro timestamp-micros, the
 * slice tables' bigint event_time, the idempotency key); generated records hold them as Instant.
 */
public final class Micros {
    private Micros() {}

    public static long of(Instant t) {
        return Math.addExact(Math.multiplyExact(t.getEpochSecond(), 1_000_000L), t.getNano() / 1000);
    }

    /**
     * An ISO-8601 instant as microseconds since the epoch. The form clients send almost always
     * ("2024-10-03T21:24:23.988Z": UTC, 0-9 fraction digits) is read by hand, since
     * {@link Instant#parse} cost more CPU than the rest of a counter request's validation; every
     * other form (offsets, leap seconds, years past 9999) goes to {@link Instant#parse}, so the
     * two accept exactly the same texts.
     *
     * @throws java.time.format.DateTimeParseException when the text is not an instant
     * @throws ArithmeticException when it lies outside the microseconds a long holds
     */
    public static long parse(String text) {
        int n = text.length();
        if (n >= 20 && n <= 30 && text.charAt(n - 1) == 'Z') {
            long fast = utcOrMinusOne(text, n - 1);
            if (fast >= 0) {
                return fast;
            }
        }
        return of(Instant.parse(text));
    }

    /** yyyy-MM-ddTHH:mm:ss[.fffffffff] up to `end`, or -1 for anything else (the general parser decides). */
    private static long utcOrMinusOne(String s, int end) {
        if (s.charAt(4) != '-'
                || s.charAt(7) != '-'
                || s.charAt(10) != 'T'
                || s.charAt(13) != ':'
                || s.charAt(16) != ':') {
            return -1;
        }
        int year = digits(s, 0, 4);
        int month = digits(s, 5, 2);
        int day = digits(s, 8, 2);
        int hour = digits(s, 11, 2);
        int minute = digits(s, 14, 2);
        int second = digits(s, 17, 2);
        if (year < 1970 || month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) {
            return -1; // before the epoch, out of range or not digits: Instant.parse answers
        }
        if (day > java.time.YearMonth.of(year, month).lengthOfMonth()) {
            return -1;
        }
        long micros = 0;
        if (end > 19) {
            int fraction = end - 20;
            if (s.charAt(19) != '.' || fraction < 1 || fraction > 9) {
                return -1;
            }
            int f = digits(s, 20, fraction);
            if (f < 0) {
                return -1;
            }
            for (int i = fraction; i < 9; i++) {
                f *= 10;
            }
            micros = f / 1000;
        }
        long days = java.time.LocalDate.of(year, month, day).toEpochDay();
        return ((days * 86_400 + hour * 3600L + minute * 60L + second) * 1_000_000L) + micros;
    }

    /** The non-negative number of `count` decimal digits at `from`, or -1. */
    private static int digits(String s, int from, int count) {
        int v = 0;
        for (int i = from; i < from + count; i++) {
            int d = s.charAt(i) - '0';
            if (d < 0 || d > 9) {
                return -1;
            }
            v = v * 10 + d;
        }
        return v;
    }

    /** 10000-01-01T00:00:00Z: from here Instant writes a sign and a five-digit year. */
    private static final long FIRST_FIVE_DIGIT_YEAR = 253_402_300_800_000_000L;

    /**
     * Microseconds since the epoch as {@link Instant#toString} writes them ("2024-10-03T21:24:23.988Z":
     * the fraction in groups of three digits, none when it is 0), by hand for 1970 to 9999: a read
     * answers with an event time per event, and Instant's formatter cost more than the rest of
     * writing the event. Other instants go to Instant, so both write the same text.
     */
    public static String format(long micros) {
        if (micros < 0 || micros >= FIRST_FIVE_DIGIT_YEAR) {
            return toInstant(micros).toString();
        }
        long seconds = micros / 1_000_000L;
        int fraction = (int) (micros % 1_000_000L);
        java.time.LocalDate day = java.time.LocalDate.ofEpochDay(seconds / 86_400);
        int ofDay = (int) (seconds % 86_400);
        char[] c = new char[fraction == 0 ? 20 : fraction % 1000 == 0 ? 24 : 27];
        put(c, 0, day.getYear(), 4);
        c[4] = '-';
        put(c, 5, day.getMonthValue(), 2);
        c[7] = '-';
        put(c, 8, day.getDayOfMonth(), 2);
        c[10] = 'T';
        put(c, 11, ofDay / 3600, 2);
        c[13] = ':';
        put(c, 14, ofDay / 60 % 60, 2);
        c[16] = ':';
        put(c, 17, ofDay % 60, 2);
        if (fraction != 0) {
            c[19] = '.';
            if (c.length == 24) {
                put(c, 20, fraction / 1000, 3);
            } else {
                put(c, 20, fraction, 6);
            }
        }
        c[c.length - 1] = 'Z';
        return new String(c);
    }

    /** `value` as `width` decimal digits at `at`, zero-padded. */
    private static void put(char[] c, int at, int value, int width) {
        for (int i = at + width - 1; i >= at; i--) {
            c[i] = (char) ('0' + value % 10);
            value /= 10;
        }
    }

    public static Instant toInstant(long micros) {
        return Instant.ofEpochSecond(Math.floorDiv(micros, 1_000_000L), Math.floorMod(micros, 1_000_000L) * 1000);
    }
}
