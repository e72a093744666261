package io.tally.jobs.sched;

import io.tally.jobs.state.FormatSnapshot;
import io.tally.jobs.state.HandWrittenSerializer;
import java.io.IOException;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.api.java.typeutils.runtime.PojoSerializerSnapshot;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;

/**
 * How a window's {@link WindowSketch.Acc} is written into checkpoints: its six sums, then its
 * histogram compressed (HdrHistogram's encoding), which only happens here, not at every sample.
 *
 * <p>Format version 1. State written by the POJO serializer (releases up to 2026-11-27, the
 * histogram already compressed) is read with it on restore and written with this one from then
 * on (compatible after migration).
 */
public final class WindowSketchAccSerializer extends HandWrittenSerializer<WindowSketch.Acc> {
    private static final long serialVersionUID = 1L;
    public static final WindowSketchAccSerializer INSTANCE = new WindowSketchAccSerializer();

    @Override
    public WindowSketch.Acc createInstance() {
        return new WindowSketch.Acc();
    }

    @Override
    public WindowSketch.Acc copy(WindowSketch.Acc from) {
        WindowSketch.Acc to = new WindowSketch.Acc();
        to.histogram = from.histogram; // never changed in place: a new array replaces it
        to.live = from.live == null ? null : from.live.copy();
        to.addSums(from);
        return to;
    }

    @Override
    public void serialize(WindowSketch.Acc acc, DataOutputView out) throws IOException {
        out.writeLong(acc.sameContainer);
        out.writeLong(acc.otherContainer);
        out.writeLong(acc.system);
        out.writeLong(acc.waitSameUs);
        out.writeLong(acc.waitOtherUs);
        out.writeLong(acc.waitSystemUs);
        byte[] h = acc.compressed();
        out.writeInt(h.length);
        out.write(h);
    }

    @Override
    public WindowSketch.Acc deserialize(DataInputView in) throws IOException {
        WindowSketch.Acc acc = new WindowSketch.Acc();
        acc.sameContainer = in.readLong();
        acc.otherContainer = in.readLong();
        acc.system = in.readLong();
        acc.waitSameUs = in.readLong();
        acc.waitOtherUs = in.readLong();
        acc.waitSystemUs = in.readLong();
        int n = in.readInt();
        if (n < 0 || n > 16 << 20) {
            throw new IOException("a window's histogram of " + n + " bytes: the state is corrupt");
        }
        acc.histogram = new byte[n];
        in.readFully(acc.histogram);
        return acc;
    }

    @Override
    public TypeSerializerSnapshot<WindowSketch.Acc> snapshotConfiguration() {
        return new Snapshot();
    }

    /** Written with each checkpoint; it reads state of this format and of the POJO serializer's. */
    public static final class Snapshot extends FormatSnapshot<WindowSketch.Acc> {
        public Snapshot() {
            super("window state");
        }

        @Override
        public TypeSerializer<WindowSketch.Acc> restoreSerializer() {
            return INSTANCE;
        }

        @Override
        protected boolean migratesFrom(TypeSerializerSnapshot<WindowSketch.Acc> old) {
            return old instanceof PojoSerializerSnapshot;
        }
    }
}
