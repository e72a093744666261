package io.tally.serde;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.LinkedHashMap;
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
    /** Every schema by its simple name, in dependency order. */
    public static final Map<String, Schema> ALL;

    static {
        Schema.Parser parser = new Schema.Parser();
        Map<String, Schema> all = new LinkedHashMap<>();
        for (String name : new String[] {"IdempotencyToken", "EventItem", "CounterEvent", "TimeSeriesEvent",
                "DeadLetter", "NoisyNeighborAlert"}) {
            all.put(name, parse(parser, name));
        }
        ALL = java.util.Collections.unmodifiableMap(all);
        IDEMPOTENCY_TOKEN = all.get("IdempotencyToken");
        EVENT_ITEM = all.get("EventItem");
        COUNTER_EVENT = all.get("CounterEvent");
        TIME_SERIES_EVENT = all.get("TimeSeriesEvent");
        DEAD_LETTER = all.get("DeadLetter");
        NOISY_NEIGHBOR_ALERT = all.get("NoisyNeighborAlert");
    }

    /** The value schema of each of Tally's topics (shared DESIGN.md). */
    public static final Map<String, Schema> TOPIC_VALUES = Map.of(
            "tally.counter.events", COUNTER_EVENT,
            "tally.timeseries.events", TIME_SERIES_EVENT,
            "tally.deadletter", DEAD_LETTER,
            "tally.alerts", NOISY_NEIGHBOR_ALERT);

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
