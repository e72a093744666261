package io.tally.jobs.counter;

import io.tally.jobs.control.NamespacedDecoder;
import io.tally.jobs.kafka.DeadLetterRecord;
import io.tally.jobs.kafka.RawRecord;
import io.tally.model.AcceptWindow;
import io.tally.model.DeadLetterReason;
import io.tally.model.Micros;
import io.tally.model.cassandra.KeyLimits;
import io.tally.namespace.NamespaceConfig;
import io.tally.namespace.TimeSlicePlanner;
import io.tally.serde.SchemaRegistryClient;
import org.apache.flink.util.Collector;
import org.apache.flink.util.OutputTag;
import org.apache.flink.util.function.SerializableSupplier;
import tally.v1.CounterEvent;
import tally.v1.CounterOp;

/**
 * Decodes CounterEvents and applies their namespace's config. Heartbeats (no value) only move
 * the watermark and are dropped here. What cannot be counted goes to the dead letter with a
 * reason: UNDECODABLE, UNKNOWN_NAMESPACE, WRONG_NAMESPACE_KIND, OUTSIDE_ACCEPT_WINDOW. The
 * window is judged against the record's LogAppendTime, the same clock the watermark uses. A
 * RECOUNT (an operator's repair) names a past rollup time and is exempt from the window.
 */
public class CounterEventDecoder extends NamespacedDecoder<CounterEvent, CounterMutation> {
    public static final OutputTag<DeadLetterRecord> DEAD_LETTERS = new OutputTag<>("counter-dead-letters") {};
    static final String STAGE = "counter-rollup";

    public CounterEventDecoder(SerializableSupplier<SchemaRegistryClient> registry, long unknownNamespaceGraceMillis) {
        super(registry, NamespaceConfig.Kind.COUNTER, STAGE, unknownNamespaceGraceMillis);
    }

    @Override
    protected boolean skip(RawRecord in) {
        return in.value == null; // a heartbeat: it only moved the watermark
    }

    @Override
    protected Class<CounterEvent> type() {
        return CounterEvent.class;
    }

    @Override
    protected String namespace(CounterEvent e) {
        return e.getNamespace();
    }

    @Override
    protected OutputTag<DeadLetterRecord> deadLetters() {
        return DEAD_LETTERS;
    }

    @Override
    protected void process(RawRecord in, CounterEvent e, NamespaceConfig ns, Emit ctx, Collector<CounterMutation> out) {
        String namespace = ns.name();
        long eventTime = Micros.of(e.getEventTime());
        long appended = in.timestampMillis * 1000;
        boolean recount = e.getOp() == CounterOp.RECOUNT;
        if (recount && ns.counterType() == NamespaceConfig.CounterType.BEST_EFFORT) {
            ctx.output(
                    DEAD_LETTERS,
                    new DeadLetterRecord(
                            in,
                            DeadLetterReason.RECOUNT_STALE,
                            "'" + namespace + "' counts BEST_EFFORT: no event log, nothing to recount against",
                            STAGE));
            return;
        }
        // A RECOUNT names a rollup time behind the window on purpose (the count there is immutable);
        // only one from the future is refused.
        if (recount ? eventTime > appended + AcceptWindow.FUTURE_SKEW_MICROS : !ns.accepts(eventTime, appended)) {
            ctx.output(
                    DEAD_LETTERS,
                    new DeadLetterRecord(
                            in,
                            DeadLetterReason.OUTSIDE_ACCEPT_WINDOW,
                            "event_time " + eventTime + " us is outside the accept window of '" + namespace
                                    + "' around the record's append time " + appended + " us",
                            STAGE));
            return;
        }
        String refused = KeyLimits.refusal("counter", e.getCounter(), "event_id", e.getEventId());
        if (refused != null) { // Cassandra would refuse its rows on every retry: the job would never move on
            ctx.output(DEAD_LETTERS, new DeadLetterRecord(in, DeadLetterReason.ROW_REJECTED, refused, STAGE));
            return;
        }
        CounterMutation m = new CounterMutation();
        m.namespace = namespace;
        m.counter = e.getCounter();
        m.clear = e.getOp() == CounterOp.CLEAR;
        m.recount = recount;
        m.delta = m.clear ? 0 : e.getDelta();
        m.eventTimeMicros = eventTime;
        m.eventId = e.getEventId();
        m.bestEffort = ns.counterType() == NamespaceConfig.CounterType.BEST_EFFORT;
        m.accurate = ns.counterType() == NamespaceConfig.CounterType.ACCURATE;
        m.namespaceCreatedMicros = namespaceCreatedMicros(namespace);
        // The rollup steps downstream get the config with each mutation (the broadcast join is here).
        m.acceptLimitMs = ns.acceptLimit().toMillis();
        m.coalesceMs = ns.rollup().coalesceMs();
        m.clockSkewMs = ns.rollup().clockSkewMs();
        TimeSlicePlanner.Placement place = planner(ns).place(eventTime, m.eventId);
        m.table = place.slice().tableName();
        m.sliceStartMicros = place.slice().startMicros();
        m.sliceEndMicros = place.slice().endMicros();
        m.timeBucket = place.timeBucket();
        m.eventBucket = place.eventBucket();
        m.deleteAfterSeconds = ns.retention().deleteAfter().toSeconds();
        m.raw = in;
        out.collect(m);
    }
}
