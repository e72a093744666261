package io.tally.jobs.control;

import io.tally.jobs.kafka.DeadLetterRecord;
import io.tally.jobs.kafka.RawRecord;
import io.tally.model.DeadLetterReason;
import io.tally.namespace.NamespaceChange;
import io.tally.namespace.NamespaceConfig;
import io.tally.namespace.TimeSlicePlanner;
import io.tally.serde.AvroSerde;
import io.tally.serde.RegistryUnavailableException;
import io.tally.serde.SchemaRegistryClient;
import io.tally.serde.SerdeException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Optional;
import org.apache.avro.specific.SpecificRecord;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.state.ReadOnlyBroadcastState;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.runtime.state.FunctionInitializationContext;
import org.apache.flink.runtime.state.FunctionSnapshotContext;
import org.apache.flink.streaming.api.checkpoint.CheckpointedFunction;
import org.apache.flink.streaming.api.functions.co.BroadcastProcessFunction;
import org.apache.flink.util.Collector;
import org.apache.flink.util.OutputTag;
import org.apache.flink.util.function.SerializableSupplier;

/**
 * The first step of every writer job: decode a raw record with the shared serde (resolved to
 * the job's schema) and find its namespace, of the expected kind, in the broadcast control
 * plane; then {@link #process} it. What fails goes to the dead letter: UNDECODABLE,
 * UNKNOWN_NAMESPACE, WRONG_NAMESPACE_KIND.
 *
 * <p>The control stream and the data stream are not ordered with each other, so a record of a
 * namespace this operator has not heard of yet (created a moment ago: the gateway saw it first)
 * is parked, checkpointed, and processed as soon as its namespace arrives; only after
 * {@code graceMillis} (judged on the control stream's ticks, every second) is it an
 * UNKNOWN_NAMESPACE dead letter. A namespace known to be deleted is not waited for. Likewise a
 * record the gateway accepted under a newer version of its namespace's config (its
 * {@link NamespaceChange#VERSION_HEADER}) waits for that version, so a change applies to every
 * write accepted after it; after the grace it is processed with the config at hand.
 *
 * <p>A namespace deleted and created again under its name starts at version 1 again, so the
 * gateway also says when the namespace it accepted a record under was created
 * ({@link NamespaceChange#CREATED_HEADER}): a record of a later creation than this step knows
 * waits for it even where the name is known deleted (the gateway heard of the new namespace
 * first), and a record of an earlier one (its namespace deleted since) is an UNKNOWN_NAMESPACE
 * dead letter rather than an event of the namespace that now has the name.
 */
public abstract class NamespacedDecoder<V extends SpecificRecord, OUT>
        extends BroadcastProcessFunction<RawRecord, NamespaceChange, OUT> implements CheckpointedFunction {
    private final SerializableSupplier<SchemaRegistryClient> registry;
    private final NamespaceConfig.Kind kind;
    private final String stage;
    private final long graceMillis;
    protected transient AvroSerde serde;
    private transient LiveNamespaces namespaces;
    private transient List<Parked> parked;
    private transient ListState<Parked> parkedState;
    /** Planners by config (a changed time_partition gets its own; configs change rarely). */
    private transient TimeSlicePlanner.Cache planners;

    /** Where a step's outputs go, from either side's context. */
    public interface Emit {
        <X> void output(OutputTag<X> tag, X value);
    }

    /** A record waiting for its namespace. */
    public static class Parked {
        public RawRecord record;
        public String namespace;
        public long sinceMillis;

        public Parked() {}

        Parked(RawRecord record, String namespace, long sinceMillis) {
            this.record = record;
            this.namespace = namespace;
            this.sinceMillis = sinceMillis;
        }
    }

    protected NamespacedDecoder(
            SerializableSupplier<SchemaRegistryClient> registry,
            NamespaceConfig.Kind kind,
            String stage,
            long graceMillis) {
        this.registry = registry;
        this.kind = kind;
        this.stage = stage;
        this.graceMillis = graceMillis;
    }

    /** The generated record class the payload decodes into (the writer's schema resolved to it). */
    protected abstract Class<V> type();

    /** The namespace a decoded record names. */
    protected abstract String namespace(V value);

    protected abstract OutputTag<DeadLetterRecord> deadLetters();

    /** A decoded record of a known namespace of the right kind. */
    protected abstract void process(RawRecord in, V value, NamespaceConfig ns, Emit emit, Collector<OUT> out);

    /**
     * When the namespace {@link #process} is called for was created (0: unknown); valid during that
     * call: a namespace deleted and created again under its name is a new one.
     */
    protected long namespaceCreatedMicros(String name) {
        return namespaces.createdMicros(name);
    }

    /** Records that carry no event (a heartbeat) and are dropped before decoding. */
    protected boolean skip(RawRecord in) {
        return false;
    }

    @Override
    public void open(OpenContext ctx) throws Exception {
        serde = new AvroSerde(registry.get(), false);
        namespaces = new LiveNamespaces();
        planners = new TimeSlicePlanner.Cache();
    }

    /** The planner of a namespace's current config, which places its events in slices and buckets. */
    protected TimeSlicePlanner planner(NamespaceConfig ns) {
        return planners.of(ns);
    }

    @Override
    public void initializeState(FunctionInitializationContext ctx) throws Exception {
        parkedState = ctx.getOperatorStateStore()
                .getListState(new ListStateDescriptor<>("parked-for-namespace", TypeInformation.of(Parked.class)));
        parked = new ArrayList<>();
        for (Parked p : parkedState.get()) {
            parked.add(p);
        }
    }

    @Override
    public void snapshotState(FunctionSnapshotContext ctx) throws Exception {
        parkedState.update(parked);
    }

    @Override
    public void processElement(RawRecord in, ReadOnlyContext ctx, Collector<OUT> out) throws Exception {
        Emit emit = ctx::output;
        expire(ctx.getBroadcastState(ControlPlane.NAMESPACES), ctx.currentProcessingTime(), emit, out);
        if (skip(in)) {
            return;
        }
        handle(in, ctx.getBroadcastState(ControlPlane.NAMESPACES), ctx.currentProcessingTime(), emit, out, false);
    }

    @Override
    public void processBroadcastElement(NamespaceChange change, Context ctx, Collector<OUT> out) throws Exception {
        Emit emit = ctx::output;
        if (change.tickOnly()) {
            expire(ctx.getBroadcastState(ControlPlane.NAMESPACES), ctx.currentProcessingTime(), emit, out);
            return;
        }
        ctx.getBroadcastState(ControlPlane.NAMESPACES).put(change.name, change);
        List<Parked> waiting = new ArrayList<>();
        for (Iterator<Parked> it = parked.iterator(); it.hasNext(); ) {
            Parked p = it.next();
            if (p.namespace.equals(change.name)) {
                waiting.add(p);
                it.remove();
            }
        }
        for (Parked p : waiting) { // decided now, or parked again if still behind
            handle(p.record, ctx.getBroadcastState(ControlPlane.NAMESPACES), p.sinceMillis, emit, out, false);
        }
        expire(ctx.getBroadcastState(ControlPlane.NAMESPACES), ctx.currentProcessingTime(), emit, out);
    }

    /** @param since when the record first arrived (it keeps waiting from then, if parked again) */
    private void handle(
            RawRecord in,
            ReadOnlyBroadcastState<String, NamespaceChange> state,
            long since,
            Emit emit,
            Collector<OUT> out,
            boolean force)
            throws Exception {
        V e;
        try {
            e = serde.deserialize(in.value, type());
        } catch (RegistryUnavailableException ex) {
            throw ex; // nothing is wrong with the record: the job restarts and decodes it again
        } catch (SerdeException ex) {
            emit.output(deadLetters(), new DeadLetterRecord(in, DeadLetterReason.UNDECODABLE, ex.getMessage(), stage));
            return;
        }
        String name = namespace(e);
        Optional<NamespaceConfig> ns = namespaces.over(state).get(name);
        NamespaceChange known = state.get(name);
        int creation = creation(in, known);
        if (creation < 0) {
            emit.output(
                    deadLetters(),
                    new DeadLetterRecord(
                            in,
                            DeadLetterReason.UNKNOWN_NAMESPACE,
                            "the namespace '" + name + "' it was written to was deleted; the name now belongs to"
                                    + " one created later",
                            stage));
            return;
        }
        boolean later = creation > 0; // of a namespace this step has not heard of yet under a known name
        if (!force && ns.isPresent() && known != null && (later || in.namespaceVersion > known.version)) {
            parked.add(new Parked(in, name, since)); // accepted under a config this step has not heard of yet
            return;
        }
        if (ns.isEmpty() || later) {
            if ((state.contains(name) && !later) || graceMillis == 0 || force) { // deleted, or a bad row
                emit.output(deadLetters(), unknown(in, name));
            } else {
                parked.add(new Parked(in, name, since));
            }
            return;
        }
        if (ns.get().kind() != kind) {
            emit.output(
                    deadLetters(),
                    new DeadLetterRecord(
                            in,
                            DeadLetterReason.WRONG_NAMESPACE_KIND,
                            "namespace '" + name + "' is not a " + kind.name().toLowerCase() + " namespace",
                            stage));
            return;
        }
        process(in, e, ns.get(), emit, out);
    }

    /**
     * Records that waited graceMillis: an UNKNOWN_NAMESPACE dead letter if their namespace is
     * still unknown, else processed with the config at hand (the newer one they were accepted
     * under is late, or was a bad row).
     */
    private void expire(ReadOnlyBroadcastState<String, NamespaceChange> state, long now, Emit emit, Collector<OUT> out)
            throws Exception {
        if (parked.isEmpty() || parked.get(0).sinceMillis + graceMillis > now) {
            return; // parked in arrival order: the oldest decides
        }
        List<Parked> due = new ArrayList<>();
        for (Iterator<Parked> it = parked.iterator(); it.hasNext(); ) {
            Parked p = it.next();
            if (p.sinceMillis + graceMillis <= now) {
                due.add(p);
                it.remove();
            }
        }
        for (Parked p : due) {
            handle(p.record, state, p.sinceMillis, emit, out, true);
        }
    }

    /**
     * Whether a record was accepted under a later creation of its namespace's name than the one
     * this step knows (> 0), an earlier one (< 0), or the same or an unknown one (0: no header, a
     * seed file's namespace, or nothing known of the name).
     */
    static int creation(RawRecord in, NamespaceChange known) {
        if (known == null || in.namespaceCreatedMicros == 0 || known.createdMicros == 0) {
            return 0;
        }
        return Long.compare(in.namespaceCreatedMicros, known.createdMicros);
    }

    private DeadLetterRecord unknown(RawRecord in, String name) {
        return new DeadLetterRecord(
                in, DeadLetterReason.UNKNOWN_NAMESPACE, "namespace '" + name + "' does not exist", stage);
    }
}
