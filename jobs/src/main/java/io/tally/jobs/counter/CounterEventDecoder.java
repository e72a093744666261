package io.tally.jobs.counter;

import io.tally.jobs.kafka.DeadLetterRecord;
import io.tally.jobs.kafka.NamespacedRecords;
import io.tally.jobs.kafka.RawRecord;
import io.tally.jobs.timeseries.EventDecoder;
import io.tally.namespace.NamespaceCatalog;
import io.tally.namespace.NamespaceConfig;
import io.tally.serde.AvroSerde;
import io.tally.serde.SchemaRegistryClient;
import io.tally.serde.TallySchemas;
import java.nio.file.Path;
import org.apache.avro.generic.GenericRecord;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.streaming.api.functions.ProcessFunction;
import org.apache.flink.util.Collector;
import org.apache.flink.util.OutputTag;
import org.apache.flink.util.function.SerializableSupplier;

/**
 * Decodes CounterEvents and applies their namespace's config. Heartbeats (no value) only move
 * the watermark and are dropped here. What cannot be counted goes to the dead letter with a
 * reason: UNDECODABLE, UNKNOWN_NAMESPACE, WRONG_NAMESPACE_KIND, OUTSIDE_ACCEPT_WINDOW. The
 * window is judged against the record's LogAppendTime, the same clock the watermark uses.
 */
public class CounterEventDecoder extends ProcessFunction<RawRecord, CounterMutation> {
    public static final OutputTag<DeadLetterRecord> DEAD_LETTERS = new OutputTag<>("counter-dead-letters") {};
    static final String STAGE = "counter-rollup";

    private final SerializableSupplier<SchemaRegistryClient> registry;
    private final String namespacesDir;
    private transient AvroSerde serde;
    private transient NamespaceCatalog catalog;

    public CounterEventDecoder(SerializableSupplier<SchemaRegistryClient> registry, String namespacesDir) {
        this.registry = registry;
        this.namespacesDir = namespacesDir;
    }

    @Override
    public void open(OpenContext ctx) throws Exception {
        serde = new AvroSerde(registry.get(), false);
        catalog = NamespaceCatalog.fromDirectory(Path.of(namespacesDir));
    }

    @Override
    public void processElement(RawRecord in, Context ctx, Collector<CounterMutation> out) {
        if (in.value == null) {
            return; // a heartbeat
        }
        NamespacedRecords.Decoded d = NamespacedRecords.decode(in, serde, TallySchemas.COUNTER_EVENT, catalog,
                NamespaceConfig.Kind.COUNTER, STAGE, dl -> ctx.output(DEAD_LETTERS, dl));
        if (d == null) {
            return;
        }
        GenericRecord e = d.value();
        NamespaceConfig ns = d.namespace();
        String namespace = ns.name();
        long eventTime = (Long) e.get("event_time");
        long appended = in.timestampMillis * 1000;
        if (!ns.accepts(eventTime, appended, EventDecoder.FUTURE_SKEW_MICROS)) {
            ctx.output(DEAD_LETTERS, new DeadLetterRecord(in, "OUTSIDE_ACCEPT_WINDOW", "event_time " + eventTime
                    + " us is outside the accept window of '" + namespace + "' around the record's append time " + appended + " us", STAGE));
            return;
        }
        CounterMutation m = new CounterMutation();
        m.namespace = namespace;
        m.counter = e.get("counter").toString();
        m.clear = "CLEAR".equals(e.get("op").toString());
        m.delta = m.clear ? 0 : (Long) e.get("delta");
        m.eventTimeMicros = eventTime;
        m.eventId = e.get("event_id").toString();
        m.bestEffort = ns.counterType() == NamespaceConfig.CounterType.BEST_EFFORT;
        m.raw = in;
        out.collect(m);
    }
}
