package io.tally.jobs.counter;

import io.tally.jobs.state.FormatSnapshot;
import io.tally.jobs.state.HandWrittenSerializer;
import java.io.IOException;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.api.java.typeutils.runtime.PojoSerializerSnapshot;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;

/**
 * How a counter's {@link CounterRollupState} is written into checkpoints: every counter ever
 * touched has one, and the heap backend writes them all at each checkpoint, so this is most of a
 * checkpoint's cost. The POJO serializer it replaces boxed every field through reflection and wrote
 * each one as its own call into the checkpoint stream (a profile of the TaskManager put it at 14%
 * of all samples, beside the keys' 13%); here the fields are variable-length integers (most are
 * 0 or small) gathered in a buffer and written in one call.
 *
 * <p>Format version 1; a field added later needs version 2 and a read of version 1 (see {@link
 * Snapshot}). State written by the POJO serializer (releases up to 2026-11-26) is read with it on
 * restore and written with this one from then on (compatible after migration).
 */
public final class CounterRollupStateSerializer extends HandWrittenSerializer<CounterRollupState> {
    private static final long serialVersionUID = 1L;

    /** 13 fields of at most 10 bytes each. */
    private static final int MAX_BYTES = 13 * 10;

    private static final int ACCURATE = 1;

    private transient byte[] buffer;

    @Override
    public TypeSerializer<CounterRollupState> duplicate() {
        return new CounterRollupStateSerializer(); // the buffer is per instance: one per thread
    }

    @Override
    public CounterRollupState createInstance() {
        return new CounterRollupState();
    }

    @Override
    public CounterRollupState copy(CounterRollupState from) {
        CounterRollupState to = new CounterRollupState();
        to.count = from.count;
        to.rollupMicros = from.rollupMicros;
        to.lastWriteMicros = from.lastWriteMicros;
        to.lastWriteStoredMicros = from.lastWriteStoredMicros;
        to.timerMillis = from.timerMillis;
        to.acceptLimitMs = from.acceptLimitMs;
        to.coalesceMs = from.coalesceMs;
        to.clockSkewMs = from.clockSkewMs;
        to.accurate = from.accurate;
        to.liveTimerMillis = from.liveTimerMillis;
        to.lastLiveMillis = from.lastLiveMillis;
        to.repairs = from.repairs;
        to.namespaceCreatedMicros = from.namespaceCreatedMicros;
        return to;
    }

    @Override
    public void serialize(CounterRollupState s, DataOutputView out) throws IOException {
        if (buffer == null) {
            buffer = new byte[MAX_BYTES];
        }
        byte[] b = buffer;
        int n = 0;
        n = put(b, n, s.accurate ? ACCURATE : 0);
        n = put(b, n, zigZag(s.count));
        n = put(b, n, s.rollupMicros);
        n = put(b, n, s.lastWriteMicros);
        n = put(b, n, s.lastWriteStoredMicros);
        n = put(b, n, s.timerMillis);
        n = put(b, n, s.acceptLimitMs);
        n = put(b, n, s.coalesceMs);
        n = put(b, n, s.clockSkewMs);
        n = put(b, n, s.liveTimerMillis);
        n = put(b, n, s.lastLiveMillis);
        n = put(b, n, s.repairs);
        n = put(b, n, s.namespaceCreatedMicros);
        out.write(b, 0, n);
    }

    @Override
    public CounterRollupState deserialize(DataInputView in) throws IOException {
        CounterRollupState s = new CounterRollupState();
        s.accurate = (get(in) & ACCURATE) != 0;
        s.count = unZigZag(get(in));
        s.rollupMicros = get(in);
        s.lastWriteMicros = get(in);
        s.lastWriteStoredMicros = get(in);
        s.timerMillis = get(in);
        s.acceptLimitMs = get(in);
        s.coalesceMs = get(in);
        s.clockSkewMs = get(in);
        s.liveTimerMillis = get(in);
        s.lastLiveMillis = get(in);
        s.repairs = (int) get(in);
        s.namespaceCreatedMicros = get(in);
        return s;
    }

    /** An unsigned LEB128 varint: 7 bits a byte, the high bit set on every byte but the last. */
    static int put(byte[] b, int n, long v) {
        while ((v & ~0x7FL) != 0) {
            b[n++] = (byte) ((v & 0x7F) | 0x80);
            v >>>= 7;
        }
        b[n++] = (byte) v;
        return n;
    }

    static long get(DataInputView in) throws IOException {
        long v = 0;
        for (int shift = 0; shift < 64; shift += 7) {
            byte b = in.readByte();
            v |= (long) (b & 0x7F) << shift;
            if (b >= 0) {
                return v;
            }
        }
        throw new IOException("a varint of counter state runs past 10 bytes: the state is corrupt");
    }

    private static long zigZag(long v) {
        return (v << 1) ^ (v >> 63); // counts go negative too: keep small magnitudes short
    }

    private static long unZigZag(long v) {
        return (v >>> 1) ^ -(v & 1);
    }

    @Override
    public TypeSerializerSnapshot<CounterRollupState> snapshotConfiguration() {
        return new Snapshot();
    }

    /** Written with each checkpoint; it reads state of this format and of the POJO serializer's. */
    public static final class Snapshot extends FormatSnapshot<CounterRollupState> {
        public Snapshot() {
            super("counter state");
        }

        @Override
        public TypeSerializer<CounterRollupState> restoreSerializer() {
            return new CounterRollupStateSerializer();
        }

        @Override
        protected boolean migratesFrom(TypeSerializerSnapshot<CounterRollupState> old) {
            return old instanceof PojoSerializerSnapshot;
        }
    }
}
