package io.tally.model;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.avro.Schema;

/**
 * Tally's Avro schemas (schemas/avro/*.avsc, namespace tally.v1), parsed once. Types used by
 * others come first, so the parsed schemas are self-contained (no registry references).
 */
public final class TallySchemas {
    public static final Schema IDEMPOTENCY_TOKEN;
    public static final Schema EVENT_ITEM;
    public static final Schema COUNTER_EVENT;
    public static final Schema TIME_SERIES_EVENT;
    public static final Schema DEAD_LETTER;
    public static final Schema NOISY_NEIGHBOR_ALERT;
    public static final Schema COUNTER_ROLLUP;
    /** Every schema by its simple name, in dependency order. */
    public static final Map<String, Schema> ALL;

    static {
        Schema.Parser parser = new Schema.Parser();
        Map<String, Schema> all = new LinkedHashMap<>();
        for (String name : new String[] {
            "IdempotencyToken",
            "EventItem",
            "CounterEvent",
            "TimeSeriesEvent",
            "DeadLetter",
            "NoisyNeighborAlert",
            "CounterRollup"
        }) {
            all.put(name, parse(parser, name));
        }
        ALL = java.util.Collections.unmodifiableMap(all);
        IDEMPOTENCY_TOKEN = all.get("IdempotencyToken");
        EVENT_ITEM = all.get("EventItem");
        COUNTER_EVENT = all.get("CounterEvent");
        TIME_SERIES_EVENT = all.get("TimeSeriesEvent");
        DEAD_LETTER = all.get("DeadLetter");
        NOISY_NEIGHBOR_ALERT = all.get("NoisyNeighborAlert");
        COUNTER_ROLLUP = all.get("CounterRollup");
    }

    /** The value schema of each of Tally's topics that carries one (from {@link Topics#ALL}). */
    public static final Map<String, Schema> TOPIC_VALUES;

    static {
        Map<String, Schema> byTopic = new LinkedHashMap<>();
        for (Topics.Spec t : Topics.ALL) {
            if (t.valueSchema() != null) {
                byTopic.put(t.name(), ALL.get(t.valueSchema()));
            }
        }
        TOPIC_VALUES = java.util.Collections.unmodifiableMap(byTopic);
    }

    /** The classes generated from the schemas (package tally.v1), records and enums. */
    public static final List<Class<?>> GENERATED = List.of(
            tally.v1.IdempotencyToken.class,
            tally.v1.EventItem.class,
            tally.v1.CounterEvent.class,
            tally.v1.CounterOp.class,
            tally.v1.TimeSeriesEvent.class,
            tally.v1.DeadLetter.class,
            tally.v1.NoisyNeighborAlert.class,
            tally.v1.AlertState.class,
            tally.v1.CounterRollup.class);

    /**
     * The schema as published (parsed from schemas/avro) of a record type, by full name; the
     * generated classes' own schemas carry Java-only properties ({@code avro.java.string}) that
     * would make the registry see another schema. Null when it is not one of Tally's.
     */
    public static Schema published(Schema schema) {
        Schema s = ALL.get(schema.getName());
        return s != null && s.getFullName().equals(schema.getFullName()) ? s : null;
    }

    private TallySchemas() {}

    private static Schema parse(Schema.Parser parser, String name) {
        String path = "/avro/" + name + ".avsc";
        try (InputStream in = TallySchemas.class.getResourceAsStream(path)) {
            if (in == null) {
                throw new IllegalStateException("schema resource " + path + " is missing from the classpath");
            }
            return parser.parse(in);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
