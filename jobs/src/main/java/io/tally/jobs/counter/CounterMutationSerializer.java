package io.tally.jobs.counter;

import io.tally.jobs.kafka.RawRecord;
import io.tally.jobs.state.HandWrittenSerializer;
import java.io.IOException;
import org.apache.flink.api.common.typeutils.SimpleTypeSerializerSnapshot;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;
import org.apache.flink.types.StringValue;

/**
 * How a {@link CounterMutation} crosses the counter job's keyBy: its fields in a fixed order behind
 * one byte of flags, without the POJO serializer's reflective field access and per-field null
 * marks (a third of the rollup chain's samples went to that serializer in a JFR of the rollup job).
 * It is the wire format of the shuffle only: no state holds a CounterMutation, so a change here
 * needs no state migration, but it must bump {@link Snapshot}'s version if it ever does.
 */
public final class CounterMutationSerializer extends HandWrittenSerializer<CounterMutation> {
    private static final long serialVersionUID = 1L;

    public static final CounterMutationSerializer INSTANCE = new CounterMutationSerializer();

    private static final int CLEAR = 1;
    private static final int RECOUNT = 1 << 1;
    private static final int BEST_EFFORT = 1 << 2;
    private static final int ACCURATE = 1 << 3;
    private static final int HAS_RAW = 1 << 4;
    private static final int NO_BYTES = -1;

    @Override
    public CounterMutation createInstance() {
        return new CounterMutation();
    }

    @Override
    public CounterMutation copy(CounterMutation from) {
        CounterMutation to = new CounterMutation();
        to.namespace = from.namespace;
        to.counter = from.counter;
        to.clear = from.clear;
        to.recount = from.recount;
        to.delta = from.delta;
        to.eventTimeMicros = from.eventTimeMicros;
        to.eventId = from.eventId;
        to.bestEffort = from.bestEffort;
        to.accurate = from.accurate;
        to.acceptLimitMs = from.acceptLimitMs;
        to.coalesceMs = from.coalesceMs;
        to.clockSkewMs = from.clockSkewMs;
        to.namespaceCreatedMicros = from.namespaceCreatedMicros;
        to.table = from.table;
        to.sliceStartMicros = from.sliceStartMicros;
        to.sliceEndMicros = from.sliceEndMicros;
        to.timeBucket = from.timeBucket;
        to.eventBucket = from.eventBucket;
        to.deleteAfterSeconds = from.deleteAfterSeconds;
        to.raw = from.raw == null ? null : copy(from.raw);
        return to;
    }

    private static RawRecord copy(RawRecord from) {
        RawRecord to = new RawRecord(
                from.topic,
                from.partition,
                from.offset,
                from.timestampMillis,
                from.key == null ? null : from.key.clone(),
                from.value == null ? null : from.value.clone());
        to.namespaceVersion = from.namespaceVersion;
        to.namespaceCreatedMicros = from.namespaceCreatedMicros;
        return to;
    }

    @Override
    public void serialize(CounterMutation m, DataOutputView out) throws IOException {
        out.writeByte(flags(m));
        StringValue.writeString(m.namespace, out);
        StringValue.writeString(m.counter, out);
        StringValue.writeString(m.eventId, out);
        StringValue.writeString(m.table, out);
        out.writeLong(m.delta);
        out.writeLong(m.eventTimeMicros);
        out.writeLong(m.acceptLimitMs);
        out.writeLong(m.coalesceMs);
        out.writeLong(m.clockSkewMs);
        out.writeLong(m.namespaceCreatedMicros);
        out.writeLong(m.sliceStartMicros);
        out.writeLong(m.sliceEndMicros);
        out.writeInt(m.timeBucket);
        out.writeInt(m.eventBucket);
        out.writeLong(m.deleteAfterSeconds);
        if (m.raw != null) {
            RawRecord r = m.raw;
            StringValue.writeString(r.topic, out);
            out.writeInt(r.partition);
            out.writeLong(r.offset);
            out.writeLong(r.timestampMillis);
            out.writeLong(r.namespaceVersion);
            out.writeLong(r.namespaceCreatedMicros);
            writeBytes(r.key, out);
            writeBytes(r.value, out);
        }
    }

    private static int flags(CounterMutation m) {
        return (m.clear ? CLEAR : 0)
                | (m.recount ? RECOUNT : 0)
                | (m.bestEffort ? BEST_EFFORT : 0)
                | (m.accurate ? ACCURATE : 0)
                | (m.raw != null ? HAS_RAW : 0);
    }

    @Override
    public CounterMutation deserialize(DataInputView in) throws IOException {
        CounterMutation m = new CounterMutation();
        int flags = in.readByte();
        m.clear = (flags & CLEAR) != 0;
        m.recount = (flags & RECOUNT) != 0;
        m.bestEffort = (flags & BEST_EFFORT) != 0;
        m.accurate = (flags & ACCURATE) != 0;
        m.namespace = StringValue.readString(in);
        m.counter = StringValue.readString(in);
        m.eventId = StringValue.readString(in);
        m.table = StringValue.readString(in);
        m.delta = in.readLong();
        m.eventTimeMicros = in.readLong();
        m.acceptLimitMs = in.readLong();
        m.coalesceMs = in.readLong();
        m.clockSkewMs = in.readLong();
        m.namespaceCreatedMicros = in.readLong();
        m.sliceStartMicros = in.readLong();
        m.sliceEndMicros = in.readLong();
        m.timeBucket = in.readInt();
        m.eventBucket = in.readInt();
        m.deleteAfterSeconds = in.readLong();
        if ((flags & HAS_RAW) != 0) {
            RawRecord r = new RawRecord();
            r.topic = StringValue.readString(in);
            r.partition = in.readInt();
            r.offset = in.readLong();
            r.timestampMillis = in.readLong();
            r.namespaceVersion = in.readLong();
            r.namespaceCreatedMicros = in.readLong();
            r.key = readBytes(in);
            r.value = readBytes(in);
            m.raw = r;
        }
        return m;
    }

    private static void writeBytes(byte[] bytes, DataOutputView out) throws IOException {
        if (bytes == null) {
            out.writeInt(NO_BYTES);
        } else {
            out.writeInt(bytes.length);
            out.write(bytes);
        }
    }

    private static byte[] readBytes(DataInputView in) throws IOException {
        int length = in.readInt();
        if (length == NO_BYTES) {
            return null;
        }
        byte[] bytes = new byte[length];
        in.readFully(bytes);
        return bytes;
    }

    @Override
    public TypeSerializerSnapshot<CounterMutation> snapshotConfiguration() {
        return new Snapshot();
    }

    /** Restores this serializer (a shuffle's serializer is snapshotted with the job graph's config). */
    public static final class Snapshot extends SimpleTypeSerializerSnapshot<CounterMutation> {
        public Snapshot() {
            super(() -> INSTANCE);
        }
    }
}
