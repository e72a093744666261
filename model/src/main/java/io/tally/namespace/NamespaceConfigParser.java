package io.tally.namespace;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.tally.model.elasticsearch.DocumentFields;
import io.tally.namespace.NamespaceConfig.CounterType;
import io.tally.namespace.NamespaceConfig.EarlierPartition;
import io.tally.namespace.NamespaceConfig.EventBuckets;
import io.tally.namespace.NamespaceConfig.FieldType;
import io.tally.namespace.NamespaceConfig.Index;
import io.tally.namespace.NamespaceConfig.Kind;
import io.tally.namespace.NamespaceConfig.Retention;
import io.tally.namespace.NamespaceConfig.Rollup;
import io.tally.namespace.NamespaceConfig.TimePartition;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * Parses and validates a namespace config: known keys only, the right types, values in
 * range. Every error names its field (e.g. {@code time_partition.seconds_per_bucket}).
 */
public final class NamespaceConfigParser {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Pattern FIELD_NAME = Pattern.compile("[A-Za-z][A-Za-z0-9_]{0,63}");
    /** Kept by the control plane, not set by users: the earlier time_partitions and until when they applied. */
    public static final String HISTORY = "time_partition_history";

    private static final Set<String> TOP =
            Set.of("kind", "counter_type", "time_partition", "accept_limit", "retention", "index", "rollup", HISTORY);

    /** How a time bucket's events spread over its partitions: event_id (default) or event_time. */
    public static final String EVENT_BUCKETS_BY = "event_buckets_by";

    private static final Set<String> PARTITION_KEYS =
            Set.of("seconds_per_slice", "seconds_per_bucket", "buckets_per_id", EVENT_BUCKETS_BY);
    private static final Set<String> HISTORY_KEYS =
            Set.of("until", "seconds_per_slice", "seconds_per_bucket", "buckets_per_id", EVENT_BUCKETS_BY);

    /** Defaults for absent keys (the TimeSeries article's values). */
    static final TimePartition DEFAULT_PARTITION = new TimePartition(86_400, 3_600, 4);

    static final Retention DEFAULT_RETENTION = new Retention(Duration.ofDays(6), Duration.ofDays(7));
    static final Duration DEFAULT_ACCEPT_LIMIT = Duration.ofSeconds(5);
    static final Rollup DEFAULT_ROLLUP = new Rollup(1_000, 500);
    /** The longest accept window of any namespace (a bound, so every conversion of it stays in range). */
    public static final Duration MAX_ACCEPT_LIMIT = Duration.ofDays(30);
    /** Cassandra's longest TTL (20 years): a BEST_EFFORT counter's rows live delete_after. */
    public static final Duration MAX_RETENTION = Duration.ofSeconds(630_720_000);
    /** An index refreshed less often than hourly is not searchable in any useful sense. */
    public static final Duration MAX_REFRESH_INTERVAL = Duration.ofHours(1);
    /** The widest counter accept window: CounterRollupJob keeps event ids this long (plus a margin) to dedup. */
    public static final Duration MAX_COUNTER_ACCEPT_LIMIT = Duration.ofHours(1);

    private NamespaceConfigParser() {}

    public static NamespaceConfig parse(String name, String json) {
        JsonNode node;
        try {
            node = JSON.readTree(json);
        } catch (Exception e) {
            throw new InvalidConfigException("config", "not valid JSON: " + e.getMessage());
        }
        return parse(name, node);
    }

    public static NamespaceConfig parse(String name, JsonNode c) {
        NamespaceName.require(name, "name");
        if (c == null || !c.isObject()) {
            throw new InvalidConfigException("config", "must be a JSON object");
        }
        knownKeys(c, TOP, "");
        Kind kind = enumOf(Kind.class, text(c, "kind", true), "kind");
        CounterType counterType = null;
        Rollup rollup = null;
        if (kind == Kind.COUNTER) {
            counterType = enumOf(CounterType.class, text(c, "counter_type", true), "counter_type");
            rollup = rollup(c.get("rollup"));
        } else {
            forbid(c, "counter_type", "only counter namespaces have a counter_type");
            forbid(c, "rollup", "only counter namespaces have a rollup");
        }
        TimePartition tp = partition(c.get("time_partition"));
        if (kind == Kind.COUNTER && tp.eventBuckets() != EventBuckets.EVENT_ID) {
            // a counter's events are read whole by the rollup's recount and scans, never newest
            // first a page at a time: the hash spreads a hot counter's burst, which is all they need
            throw new InvalidConfigException(
                    "time_partition." + EVENT_BUCKETS_BY, "only timeseries namespaces put their event buckets by time");
        }
        Duration accept = c.has("accept_limit")
                ? within(
                        Durations.parse(text(c, "accept_limit", true), "accept_limit"),
                        "accept_limit",
                        MAX_ACCEPT_LIMIT)
                : DEFAULT_ACCEPT_LIMIT;
        if (kind == Kind.COUNTER && accept.compareTo(MAX_COUNTER_ACCEPT_LIMIT) > 0) {
            throw new InvalidConfigException(
                    "accept_limit",
                    "a counter's accept_limit is at most " + MAX_COUNTER_ACCEPT_LIMIT.toSeconds()
                            + "s (the rollup job remembers event ids for dedup that long)");
        }
        Retention retention = retention(c.get("retention"));
        Index index = index(c.get("index"));
        return new NamespaceConfig(
                name, kind, counterType, tp, accept, retention, index, rollup, history(c.get(HISTORY), tp));
    }

    private static TimePartition partition(JsonNode n) {
        if (n == null) {
            return DEFAULT_PARTITION;
        }
        object(n, "time_partition");
        knownKeys(n, PARTITION_KEYS, "time_partition.");
        long slice = longIn(
                n, "seconds_per_slice", "time_partition.", 60, 366L * 86_400, DEFAULT_PARTITION.secondsPerSlice());
        long bucket =
                longIn(n, "seconds_per_bucket", "time_partition.", 1, slice, DEFAULT_PARTITION.secondsPerBucket());
        if (slice % bucket != 0) {
            throw new InvalidConfigException(
                    "time_partition.seconds_per_bucket",
                    bucket + " does not divide seconds_per_slice " + slice + " (buckets must tile a slice)");
        }
        if (86_400 % slice != 0 && slice % 86_400 != 0) {
            throw new InvalidConfigException(
                    "time_partition.seconds_per_slice",
                    slice + " neither divides nor is a multiple of a day (slices must align to UTC days)");
        }
        int perId = (int) longIn(n, "buckets_per_id", "time_partition.", 1, 64, DEFAULT_PARTITION.bucketsPerId());
        JsonNode by = n.get(EVENT_BUCKETS_BY);
        if (by != null && !by.isNull() && !by.isTextual()) {
            throw new InvalidConfigException("time_partition." + EVENT_BUCKETS_BY, "must be event_id or event_time");
        }
        EventBuckets spread = by == null || by.isNull()
                ? DEFAULT_PARTITION.eventBuckets()
                : enumOf(EventBuckets.class, by.asText(), "time_partition." + EVENT_BUCKETS_BY);
        return new TimePartition(slice, bucket, perId, spread);
    }

    private static List<EarlierPartition> history(JsonNode n, TimePartition current) {
        if (n == null) {
            return List.of();
        }
        if (!n.isArray()) {
            throw new InvalidConfigException(
                    HISTORY,
                    "must be a list of {until, seconds_per_slice, seconds_per_bucket, buckets_per_id, event_buckets_by}");
        }
        List<EarlierPartition> out = new ArrayList<>();
        for (int i = 0; i < n.size(); i++) {
            String f = HISTORY + "[" + i + "]";
            JsonNode e = n.get(i);
            object(e, f);
            knownKeys(e, HISTORY_KEYS, f + ".");
            long until;
            try {
                until = java.time.Instant.parse(text(e, "until", true)).toEpochMilli() * 1000;
            } catch (java.time.format.DateTimeParseException ex) {
                throw new InvalidConfigException(
                        f + ".until", "must be an ISO-8601 instant such as 2026-11-24T00:00:00Z");
            }
            com.fasterxml.jackson.databind.node.ObjectNode p = e.deepCopy();
            p.remove("until");
            TimePartition tp;
            try {
                tp = partition(p);
            } catch (InvalidConfigException ex) {
                throw new InvalidConfigException(
                        f + "." + ex.field().replaceFirst("^time_partition\\.", ""), ex.getMessage());
            }
            if (!out.isEmpty() && until <= out.get(out.size() - 1).untilMicros()) {
                throw new InvalidConfigException(f + ".until", "must be later than the entry before it");
            }
            out.add(new EarlierPartition(until, tp));
        }
        for (int i = 0; i < out.size(); i++) {
            TimePartition next = i + 1 < out.size() ? out.get(i + 1).partition() : current;
            long until = out.get(i).untilMicros();
            if (until % (out.get(i).partition().secondsPerSlice() * 1_000_000L) != 0
                    || until % (next.secondsPerSlice() * 1_000_000L) != 0) {
                throw new InvalidConfigException(
                        HISTORY + "[" + i + "].until", "must be a boundary of the slices before and after it");
            }
        }
        return List.copyOf(out);
    }

    /** A history entry as JSON (the control plane writes it into the stored config). */
    public static com.fasterxml.jackson.databind.node.ObjectNode historyEntry(EarlierPartition e) {
        com.fasterxml.jackson.databind.node.ObjectNode entry = JSON.createObjectNode()
                .put(
                        "until",
                        java.time.Instant.EPOCH
                                .plusNanos(e.untilMicros() * 1000)
                                .toString())
                .put("seconds_per_slice", e.partition().secondsPerSlice())
                .put("seconds_per_bucket", e.partition().secondsPerBucket())
                .put("buckets_per_id", e.partition().bucketsPerId());
        if (e.partition().eventBuckets() != EventBuckets.EVENT_ID) { // configs stored before the key stay as they were
            entry.put(EVENT_BUCKETS_BY, e.partition().eventBuckets().name().toLowerCase(Locale.ROOT));
        }
        return entry;
    }

    private static Retention retention(JsonNode n) {
        if (n == null) {
            return DEFAULT_RETENTION;
        }
        object(n, "retention");
        knownKeys(n, Set.of("close_after", "delete_after"), "retention.");
        Duration close = within(
                Durations.parse(text(n, "close_after", true), "retention.close_after"),
                "retention.close_after",
                MAX_RETENTION);
        Duration delete = within(
                Durations.parse(text(n, "delete_after", true), "retention.delete_after"),
                "retention.delete_after",
                MAX_RETENTION);
        if (delete.compareTo(close) < 0) {
            throw new InvalidConfigException("retention.delete_after", "must not be shorter than close_after");
        }
        return new Retention(close, delete);
    }

    private static Index index(JsonNode n) {
        if (n == null) {
            return Index.DISABLED;
        }
        object(n, "index");
        knownKeys(n, Set.of("enabled", "field_mapping", "refresh_interval"), "index.");
        JsonNode enabledNode = n.get("enabled");
        if (enabledNode != null && !enabledNode.isBoolean()) {
            throw new InvalidConfigException("index.enabled", "must be true or false");
        }
        boolean enabled = enabledNode == null || enabledNode.asBoolean();
        Map<String, FieldType> mapping = new LinkedHashMap<>();
        JsonNode fm = n.get("field_mapping");
        if (fm != null) {
            object(fm, "index.field_mapping");
            for (Iterator<Map.Entry<String, JsonNode>> it = fm.fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> e = it.next();
                String f = "index.field_mapping." + e.getKey();
                if (!FIELD_NAME.matcher(e.getKey()).matches()) {
                    throw new InvalidConfigException(
                            f, "field names are letters, digits and '_', starting with a letter");
                }
                if (DocumentFields.RESERVED.contains(e.getKey())) {
                    throw new InvalidConfigException(
                            f,
                            "'" + e.getKey() + "' is one of every document's own fields "
                                    + new TreeSet<>(DocumentFields.RESERVED));
                }
                if (!e.getValue().isTextual()) {
                    throw new InvalidConfigException(f, "must be a type name such as KEYWORD or INTEGER");
                }
                mapping.put(e.getKey(), enumOf(FieldType.class, e.getValue().asText(), f));
            }
        }
        Duration refresh = n.has("refresh_interval")
                ? within(
                        Durations.parse(text(n, "refresh_interval", true), "index.refresh_interval"),
                        "index.refresh_interval",
                        MAX_REFRESH_INTERVAL)
                : Duration.ofSeconds(1);
        return new Index(enabled, Map.copyOf(mapping), refresh);
    }

    private static Rollup rollup(JsonNode n) {
        if (n == null) {
            return DEFAULT_ROLLUP;
        }
        object(n, "rollup");
        knownKeys(n, Set.of("coalesce_ms", "clock_skew_ms"), "rollup.");
        return new Rollup(
                longIn(n, "coalesce_ms", "rollup.", 1, 3_600_000, DEFAULT_ROLLUP.coalesceMs()),
                longIn(n, "clock_skew_ms", "rollup.", 0, 600_000, DEFAULT_ROLLUP.clockSkewMs()));
    }

    // ---- helpers -------------------------------------------------------------------------

    private static void knownKeys(JsonNode n, Set<String> known, String prefix) {
        for (Iterator<String> it = n.fieldNames(); it.hasNext(); ) {
            String k = it.next();
            if (!known.contains(k)) {
                throw new InvalidConfigException(
                        prefix + k, "unknown key (known: " + String.join(", ", new java.util.TreeSet<>(known)) + ")");
            }
        }
    }

    private static void object(JsonNode n, String field) {
        if (!n.isObject()) {
            throw new InvalidConfigException(field, "must be a JSON object");
        }
    }

    private static void forbid(JsonNode n, String key, String why) {
        if (n.has(key)) {
            throw new InvalidConfigException(key, why);
        }
    }

    private static String text(JsonNode n, String key, boolean required) {
        JsonNode v = n.get(key);
        if (v == null || v.isNull()) {
            if (required) {
                throw new InvalidConfigException(key, "is required");
            }
            return null;
        }
        if (!v.isTextual()) {
            throw new InvalidConfigException(key, "must be a string");
        }
        return v.asText();
    }

    private static long longIn(JsonNode n, String key, String prefix, long min, long max, long dflt) {
        JsonNode v = n.get(key);
        if (v == null) {
            return dflt;
        }
        if (!v.isIntegralNumber()) {
            throw new InvalidConfigException(prefix + key, "must be a whole number");
        }
        long x = v.asLong();
        if (x < min || x > max) {
            throw new InvalidConfigException(prefix + key, x + " is outside " + min + ".." + max);
        }
        return x;
    }

    /** Longer than zero and at most max (a bound keeps every later conversion, toNanos too, in range). */
    private static Duration within(Duration d, String field, Duration max) {
        if (d.isZero() || d.isNegative()) {
            throw new InvalidConfigException(field, "must be longer than zero");
        }
        if (d.compareTo(max) > 0) {
            throw new InvalidConfigException(
                    field, d.toSeconds() + "s is longer than the limit of " + max.toSeconds() + "s (" + max + ")");
        }
        return d;
    }

    private static <E extends Enum<E>> E enumOf(Class<E> type, String raw, String field) {
        try {
            return Enum.valueOf(type, raw.toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new InvalidConfigException(
                    field, "'" + raw + "' is not one of " + java.util.Arrays.toString(type.getEnumConstants()));
        }
    }
}
