package io.tally.jobs.timeseries;

import io.tally.jobs.cassandra.EventRow;
import io.tally.jobs.control.NamespacedDecoder;
import io.tally.jobs.elasticsearch.IndexDoc;
import io.tally.jobs.kafka.DeadLetterRecord;
import io.tally.jobs.kafka.RawRecord;
import io.tally.model.Bytes;
import io.tally.model.DeadLetterReason;
import io.tally.model.Micros;
import io.tally.model.cassandra.KeyLimits;
import io.tally.namespace.NamespaceConfig;
import io.tally.namespace.NamespaceName;
import io.tally.namespace.TimeSlicePlanner;
import io.tally.serde.SchemaRegistryClient;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.util.Collector;
import org.apache.flink.util.OutputTag;
import org.apache.flink.util.function.SerializableSupplier;
import tally.v1.EventItem;
import tally.v1.TimeSeriesEvent;

/**
 * Decodes TimeSeriesEvents, applies their namespace's config and plans their rows. What it
 * cannot process goes to the dead-letter side output with a reason: UNDECODABLE,
 * UNKNOWN_NAMESPACE, WRONG_NAMESPACE_KIND, OUTSIDE_ACCEPT_WINDOW, SLICE_CLOSED. The accept window is judged
 * against the Kafka record's timestamp (the broker's LogAppendTime), not the clock, so a replay
 * decides the same way; it reaches {@link io.tally.model.AcceptWindow#STORE_GRACE} further back, the
 * longest a producer takes to deliver.
 */
public class EventDecoder extends NamespacedDecoder<TimeSeriesEvent, EventRow> {
    public static final OutputTag<DeadLetterRecord> DEAD_LETTERS = new OutputTag<>("dead-letters") {};
    /** One document per stored event of a namespace whose index is enabled. */
    public static final OutputTag<IndexDoc> INDEX_DOCS = new OutputTag<>("index-docs") {};

    static final String STAGE = "timeseries-writer";

    /** The config whose index template this instance sent last, per namespace. */
    private transient Map<String, NamespaceConfig> templated;

    public EventDecoder(SerializableSupplier<SchemaRegistryClient> registry, long unknownNamespaceGraceMillis) {
        super(registry, NamespaceConfig.Kind.TIMESERIES, STAGE, unknownNamespaceGraceMillis);
    }

    @Override
    public void open(OpenContext ctx) throws Exception {
        super.open(ctx);
        templated = new HashMap<>();
    }

    @Override
    protected Class<TimeSeriesEvent> type() {
        return TimeSeriesEvent.class;
    }

    @Override
    protected String namespace(TimeSeriesEvent e) {
        return e.getNamespace();
    }

    @Override
    protected OutputTag<DeadLetterRecord> deadLetters() {
        return DEAD_LETTERS;
    }

    @Override
    protected void process(RawRecord in, TimeSeriesEvent e, NamespaceConfig ns, Emit ctx, Collector<EventRow> out) {
        String namespace = ns.name();
        long eventTime = Micros.of(e.getEventTime());
        long arrival = in.timestampMillis * 1000;
        if (!ns.storable(eventTime, arrival)) {
            ctx.output(
                    DEAD_LETTERS,
                    new DeadLetterRecord(
                            in,
                            DeadLetterReason.OUTSIDE_ACCEPT_WINDOW,
                            "event_time " + eventTime + " us is outside the accept window of '" + namespace
                                    + "' around the record's timestamp " + arrival + " us",
                            STAGE));
            return;
        }
        String eventId = e.getEventId();
        String badKey = KeyLimits.refusal("time_series_id", e.getTimeSeriesId(), "event_id", eventId);
        for (EventItem item : e.getItems()) {
            badKey = badKey != null ? badKey : KeyLimits.refusal("eventItemKey", item.getKey());
        }
        if (badKey != null) { // Cassandra would refuse its rows on every retry: the job would never move on
            ctx.output(DEAD_LETTERS, new DeadLetterRecord(in, DeadLetterReason.ROW_REJECTED, badKey, STAGE));
            return;
        }
        TimeSlicePlanner.Placement place = planner(ns).place(eventTime, eventId);
        if (place.slice().endMicros() + ns.retention().closeAfter().toNanos() / 1000 <= arrival) {
            ctx.output(
                    DEAD_LETTERS,
                    new DeadLetterRecord(
                            in,
                            DeadLetterReason.SLICE_CLOSED,
                            "slice " + place.slice().tableName() + " of '" + namespace + "' is closed (close_after "
                                    + ns.retention().closeAfter() + ")",
                            STAGE));
            return;
        }
        List<EventItem> items = e.getItems();
        String keyspace = NamespaceName.keyspace(namespace);
        if (ns.index().enabled()) {
            if (!ns.equals(templated.get(namespace))) { // its template goes ahead of its first document
                ctx.output(INDEX_DOCS, IndexDoc.templateOf(ns));
                templated.put(namespace, ns);
            }
            List<String> refused = new ArrayList<>(0);
            ctx.output(
                    INDEX_DOCS,
                    IndexDocs.of(
                            ns, place.slice().indexName(), e.getTimeSeriesId(), eventTime, eventId, items, refused));
            if (!refused.isEmpty()) { // stored whole, indexed without these: the original stays replayable
                ctx.output(
                        DEAD_LETTERS,
                        new DeadLetterRecord(
                                in,
                                DeadLetterReason.INDEX_REJECTED,
                                "stored in Cassandra, indexed without " + String.join("; ", refused),
                                STAGE));
            }
        }
        long created = namespaceCreatedMicros(namespace);
        if (items.isEmpty()) {
            out.collect(row(keyspace, namespace, created, place, e, eventTime, eventId, "", new byte[0]));
        }
        for (EventItem item : items) {
            out.collect(row(
                    keyspace,
                    namespace,
                    created,
                    place,
                    e,
                    eventTime,
                    eventId,
                    item.getKey(),
                    Bytes.of(item.getValue())));
        }
    }

    private static EventRow row(
            String keyspace,
            String namespace,
            long namespaceCreatedMicros,
            TimeSlicePlanner.Placement p,
            TimeSeriesEvent e,
            long eventTime,
            String eventId,
            String itemKey,
            byte[] value) {
        EventRow r = new EventRow();
        r.keyspace = keyspace;
        r.table = p.slice().tableName();
        r.namespace = namespace;
        r.namespaceCreatedMicros = namespaceCreatedMicros;
        r.sliceStartMicros = p.slice().startMicros();
        r.sliceEndMicros = p.slice().endMicros();
        r.timeSeriesId = e.getTimeSeriesId();
        r.timeBucket = p.timeBucket();
        r.eventBucket = p.eventBucket();
        r.eventTimeMicros = eventTime;
        r.eventId = eventId;
        r.itemKey = itemKey;
        r.itemValue = value;
        return r;
    }
}
