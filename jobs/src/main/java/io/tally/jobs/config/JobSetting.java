package io.tally.jobs.config;

import java.net.URI;

/**
 * One argument of a job, declared once: its name ({@code --name value} or {@code --name=value}),
 * its kind (which says how it is checked), its default and what it is for.
 */
public record JobSetting(String name, Kind kind, String defaultValue, String description) {
    /** How a value is checked; the error names the setting. */
    public enum Kind {
        /** Any non-empty text. */
        TEXT,
        /** Any text, or nothing (the setting is not used). */
        OPTIONAL,
        /** host:port. */
        HOST_PORTS,
        /** An http(s) URL. */
        URL,
        /** A TCP port, 1..65535. */
        PORT,
        /** Milliseconds, 1 ms .. 7 days. */
        MILLIS,
        /** A whole number >= 0. */
        COUNT,
        /** A size a client library takes as an int: a whole number 1 .. 2^31-1. */
        SIZE,
        /** A number > 0. */
        RATIO,
        /** A Flink state backend Tally's jobs run on: hashmap or rocksdb. */
        STATE_BACKEND
    }

    public JobSetting {
        check(name, kind, defaultValue); // a bad default is a bug of the job, found by its unit test
    }

    /** @throws IllegalArgumentException naming the setting when value is not of its kind */
    void check(String value) {
        check(name, kind, value);
    }

    private static void check(String name, Kind kind, String value) {
        if (kind == Kind.OPTIONAL) {
            if (value == null) {
                throw bad(name, value, "must be given (empty for none)");
            }
            return;
        }
        if (value == null || value.isBlank()) {
            throw bad(name, value, "must not be empty");
        }
        switch (kind) {
            case TEXT, OPTIONAL -> {}
            case HOST_PORTS -> {
                for (String hp : value.split(",")) {
                    int colon = hp.lastIndexOf(':');
                    if (colon <= 0) {
                        throw bad(name, value, "must be host:port[,host:port...]");
                    }
                    port(name, value, hp.substring(colon + 1));
                }
            }
            case URL -> {
                try {
                    URI u = URI.create(value);
                    if (!("http".equals(u.getScheme()) || "https".equals(u.getScheme())) || u.getHost() == null) {
                        throw bad(name, value, "must be an http(s) URL");
                    }
                } catch (IllegalArgumentException e) {
                    throw bad(name, value, "must be an http(s) URL");
                }
            }
            case PORT -> port(name, value, value);
            case STATE_BACKEND -> {
                if (!value.equals("hashmap") && !value.equals("rocksdb")) {
                    throw bad(name, value, "must be hashmap or rocksdb");
                }
            }
            case MILLIS -> range(name, value, 1, 7L * 24 * 3600 * 1000);
            case COUNT -> range(name, value, 0, Long.MAX_VALUE);
            case SIZE -> range(name, value, 1, Integer.MAX_VALUE);
            case RATIO -> {
                double d;
                try {
                    d = Double.parseDouble(value);
                } catch (NumberFormatException e) {
                    throw bad(name, value, "must be a number");
                }
                if (!(d > 0) || Double.isInfinite(d)) {
                    throw bad(name, value, "must be a number above 0");
                }
            }
        }
    }

    private static void port(String name, String value, String text) {
        try {
            int p = Integer.parseInt(text);
            if (p < 1 || p > 65_535) {
                throw bad(name, value, "has a port outside 1..65535");
            }
        } catch (NumberFormatException e) {
            throw bad(name, value, "has a port that is not a number");
        }
    }

    private static void range(String name, String value, long min, long max) {
        long v;
        try {
            v = Long.parseLong(value);
        } catch (NumberFormatException e) {
            throw bad(name, value, "must be a whole number");
        }
        if (v < min || v > max) {
            throw bad(name, value, "must be within " + min + ".." + max);
        }
    }

    private static IllegalArgumentException bad(String name, String value, String why) {
        return new IllegalArgumentException("--" + name + " " + value + ": " + why);
    }
}
