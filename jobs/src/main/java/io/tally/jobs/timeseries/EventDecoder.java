package io.tally.jobs.timeseries;

import io.tally.jobs.kafka.RawRecord;
import io.tally.jobs.kafka.DeadLetterRecord;
import io.tally.jobs.kafka.NamespacedRecords;
import io.tally.jobs.cassandra.EventRow;

import io.tally.namespace.NamespaceCatalog;
import io.tally.namespace.NamespaceConfig;
import io.tally.namespace.NamespaceName;
import io.tally.namespace.TimeSlicePlanner;
import io.tally.serde.AvroSerde;
import io.tally.serde.SchemaRegistryClient;
import io.tally.serde.TallySchemas;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.avro.generic.GenericRecord;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.streaming.api.functions.ProcessFunction;
import org.apache.flink.util.Collector;
import org.apache.flink.util.OutputTag;
import org.apache.flink.util.function.SerializableSupplier;

/**
 * Decodes TimeSeriesEvents, applies their namespace's config and plans their rows. What it
 * cannot process goes to the dead-letter side output with a reason: UNDECODABLE,
 * UNKNOWN_NAMESPACE, WRONG_NAMESPACE_KIND, OUTSIDE_ACCEPT_WINDOW, SLICE_CLOSED. The accept window is judged
 * against the Kafka record's timestamp, not the clock, so a replay decides the same way.
 */
public class EventDecoder extends ProcessFunction<RawRecord, EventRow> {
    public static final OutputTag<DeadLetterRecord> DEAD_LETTERS = new OutputTag<>("dead-letters") {};
    /** One document per stored event of a namespace whose index is enabled. */
    public static final OutputTag<IndexDoc> INDEX_DOCS = new OutputTag<>("index-docs") {};
    static final String STAGE = "timeseries-writer";
    public static final long FUTURE_SKEW_MICROS = 5_000_000L;

    private final SerializableSupplier<SchemaRegistryClient> registry;
    private final String namespacesDir;
    private transient AvroSerde serde;
    private transient NamespaceCatalog catalog;
    private transient Map<String, TimeSlicePlanner> planners;

    public EventDecoder(SerializableSupplier<SchemaRegistryClient> registry, String namespacesDir) {
        this.registry = registry;
        this.namespacesDir = namespacesDir;
    }

    @Override
    public void open(OpenContext ctx) throws Exception {
        serde = new AvroSerde(registry.get(), false);
        catalog = NamespaceCatalog.fromDirectory(Path.of(namespacesDir));
        planners = new HashMap<>();
    }

    @Override
    public void processElement(RawRecord in, Context ctx, Collector<EventRow> out) {
        NamespacedRecords.Decoded d = NamespacedRecords.decode(in, serde, TallySchemas.TIME_SERIES_EVENT, catalog,
                NamespaceConfig.Kind.TIMESERIES, STAGE, dl -> ctx.output(DEAD_LETTERS, dl));
        if (d == null) {
            return;
        }
        GenericRecord e = d.value();
        NamespaceConfig ns = d.namespace();
        String namespace = ns.name();
        long eventTime = (Long) e.get("event_time");
        long arrival = in.timestampMillis * 1000;
        if (!ns.accepts(eventTime, arrival, FUTURE_SKEW_MICROS)) {
            ctx.output(DEAD_LETTERS, new DeadLetterRecord(in, "OUTSIDE_ACCEPT_WINDOW", "event_time " + eventTime
                    + " us is outside the accept window of '" + namespace + "' around the record's timestamp " + arrival + " us", STAGE));
            return;
        }
        String eventId = e.get("event_id").toString();
        TimeSlicePlanner.Placement place = planners.computeIfAbsent(namespace, n -> new TimeSlicePlanner(ns)).place(eventTime, eventId);
        if (place.slice().endMicros() + ns.retention().closeAfter().toNanos() / 1000 <= arrival) {
            ctx.output(DEAD_LETTERS, new DeadLetterRecord(in, "SLICE_CLOSED", "slice " + place.slice().tableName()
                    + " of '" + namespace + "' is closed (close_after " + ns.retention().closeAfter() + ")", STAGE));
            return;
        }
        @SuppressWarnings("unchecked")
        List<GenericRecord> items = (List<GenericRecord>) e.get("items");
        String keyspace = NamespaceName.keyspace(namespace);
        if (ns.index().enabled()) {
            ctx.output(INDEX_DOCS, IndexDocs.of(ns, place.slice().indexName(), e.get("time_series_id").toString(),
                    eventTime, eventId, items));
        }
        if (items.isEmpty()) {
            out.collect(row(keyspace, namespace, place, e, eventTime, eventId, "", new byte[0]));
        }
        for (GenericRecord item : items) {
            ByteBuffer v = (ByteBuffer) item.get("value");
            byte[] bytes = new byte[v.remaining()];
            v.duplicate().get(bytes);
            out.collect(row(keyspace, namespace, place, e, eventTime, eventId, item.get("key").toString(), bytes));
        }
    }

    private static EventRow row(String keyspace, String namespace, TimeSlicePlanner.Placement p, GenericRecord e,
                                long eventTime, String eventId, String itemKey, byte[] value) {
        EventRow r = new EventRow();
        r.keyspace = keyspace;
        r.table = p.slice().tableName();
        r.namespace = namespace;
        r.sliceStartMicros = p.slice().startMicros();
        r.sliceEndMicros = p.slice().endMicros();
        r.timeSeriesId = e.get("time_series_id").toString();
        r.timeBucket = p.timeBucket();
        r.eventBucket = p.eventBucket();
        r.eventTimeMicros = eventTime;
        r.eventId = eventId;
        r.itemKey = itemKey;
        r.itemValue = value;
        return r;
    }
}
