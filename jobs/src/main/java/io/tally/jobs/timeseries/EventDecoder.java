package io.tally.jobs.timeseries;

import io.tally.jobs.kafka.RawRecord;
import io.tally.jobs.kafka.DeadLetterRecord;
import io.tally.jobs.control.NamespacedDecoder;
import org.apache.avro.Schema;
import io.tally.jobs.cassandra.EventRow;

import io.tally.namespace.NamespaceConfig;
import io.tally.namespace.NamespaceName;
import io.tally.namespace.TimeSlicePlanner;
import io.tally.serde.SchemaRegistryClient;
import io.tally.serde.TallySchemas;
import java.nio.ByteBuffer;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.avro.generic.GenericRecord;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.util.Collector;
import org.apache.flink.util.OutputTag;
import org.apache.flink.util.function.SerializableSupplier;

/**
 * Decodes TimeSeriesEvents, applies their namespace's config and plans their rows. What it
 * cannot process goes to the dead-letter side output with a reason: UNDECODABLE,
 * UNKNOWN_NAMESPACE, WRONG_NAMESPACE_KIND, OUTSIDE_ACCEPT_WINDOW, SLICE_CLOSED. The accept window is judged
 * against the Kafka record's timestamp, not the clock, so a replay decides the same way.
 */
public class EventDecoder extends NamespacedDecoder<EventRow> {
    public static final OutputTag<DeadLetterRecord> DEAD_LETTERS = new OutputTag<>("dead-letters") {};
    /** One document per stored event of a namespace whose index is enabled. */
    public static final OutputTag<IndexDoc> INDEX_DOCS = new OutputTag<>("index-docs") {};
    static final String STAGE = "timeseries-writer";
    public static final long FUTURE_SKEW_MICROS = 5_000_000L;

    /** Planners by config (a changed time_partition gets its own; configs change rarely). */
    private transient Map<NamespaceConfig, TimeSlicePlanner> planners;

    private final String elasticsearch;
    private transient Map<String, NamespaceConfig> templated;

    /** @param elasticsearch where index templates go (null: a test without Elasticsearch) */
    public EventDecoder(SerializableSupplier<SchemaRegistryClient> registry, long unknownNamespaceGraceMillis, String elasticsearch) {
        super(registry, NamespaceConfig.Kind.TIMESERIES, STAGE, unknownNamespaceGraceMillis);
        this.elasticsearch = elasticsearch;
    }

    @Override
    public void open(OpenContext ctx) throws Exception {
        super.open(ctx);
        planners = new HashMap<>();
        templated = new HashMap<>();
    }

    @Override
    protected Schema schema() {
        return TallySchemas.TIME_SERIES_EVENT;
    }

    @Override
    protected OutputTag<DeadLetterRecord> deadLetters() {
        return DEAD_LETTERS;
    }

    @Override
    protected void process(RawRecord in, GenericRecord e, NamespaceConfig ns, Emit ctx, Collector<EventRow> out) {
        String namespace = ns.name();
        long eventTime = (Long) e.get("event_time");
        long arrival = in.timestampMillis * 1000;
        if (!ns.accepts(eventTime, arrival, FUTURE_SKEW_MICROS)) {
            ctx.output(DEAD_LETTERS, new DeadLetterRecord(in, "OUTSIDE_ACCEPT_WINDOW", "event_time " + eventTime
                    + " us is outside the accept window of '" + namespace + "' around the record's timestamp " + arrival + " us", STAGE));
            return;
        }
        String eventId = e.get("event_id").toString();
        TimeSlicePlanner.Placement place = planners.computeIfAbsent(ns, TimeSlicePlanner::new).place(eventTime, eventId);
        if (place.slice().endMicros() + ns.retention().closeAfter().toNanos() / 1000 <= arrival) {
            ctx.output(DEAD_LETTERS, new DeadLetterRecord(in, "SLICE_CLOSED", "slice " + place.slice().tableName()
                    + " of '" + namespace + "' is closed (close_after " + ns.retention().closeAfter() + ")", STAGE));
            return;
        }
        @SuppressWarnings("unchecked")
        List<GenericRecord> items = (List<GenericRecord>) e.get("items");
        String keyspace = NamespaceName.keyspace(namespace);
        if (ns.index().enabled()) {
            ensureTemplate(ns);
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

    /**
     * The index template and mapping of a namespace's config are in place before its first
     * document of that config leaves: Elasticsearch creates a slice index on its first document,
     * and only a template present then gives it the mapping and the alias, and a field is only
     * indexed once mapped (the provisioner runs beside this step, not before it). Once per
     * config and instance; a failure is logged and retried.
     */
    private void ensureTemplate(NamespaceConfig ns) {
        if (elasticsearch == null || ns.equals(templated.get(ns.name()))) {
            return;
        }
        try {
            IndexDocs.putTemplateAndMapping(new ElasticsearchAdmin(elasticsearch), ns);
            templated.put(ns.name(), ns);
        } catch (Exception e) {
            org.slf4j.LoggerFactory.getLogger(EventDecoder.class).warn("index template of {}: {}", ns.name(), e.toString());
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
