package io.tally.jobs.state;

import java.io.IOException;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.api.common.typeutils.base.StringSerializer;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;
import org.apache.flink.types.StringValue;

/**
 * Flink's {@link StringSerializer} format, byte for byte, written with one call into the stream.
 *
 * <p>The heap backend writes a state's key with every entry of every state and timer into each
 * checkpoint, and {@code StringSerializer} hands each byte of a string to the checkpoint stream
 * as a call of its own (through three wrapping streams): keys were half of the counter job's
 * snapshot time (docs/performance-log.md). This one builds the same bytes in an array and writes
 * them at once. Because the bytes are the same, state written by either serializer is read by the
 * other, and a checkpoint whose keys were written by {@code StringSerializer} restores as is (the
 * key serializer of a keyed backend must be compatible as is: Flink does not migrate keys).
 *
 * <p>Stateless (the array is per call), so one instance serves every thread.
 */
public final class OneWriteStringSerializer extends HandWrittenSerializer<String> {
    private static final long serialVersionUID = 1L;
    public static final OneWriteStringSerializer INSTANCE = new OneWriteStringSerializer();

    private static final int HIGH_BIT = 0x80;

    @Override
    public boolean isImmutableType() {
        return true;
    }

    @Override
    public String createInstance() {
        return "";
    }

    @Override
    public String copy(String from) {
        return from;
    }

    @Override
    public void serialize(String s, DataOutputView out) throws IOException {
        if (s == null) {
            out.write(0); // StringSerializer's null
            return;
        }
        int length = s.length();
        // the length + 1 (0 is null) and each char as a varint of 7 bits a byte: at most 3 bytes a
        // char (a char has 16 bits), 5 for the length
        byte[] b = new byte[5 + 3 * length];
        int n = put(b, 0, length + 1);
        for (int i = 0; i < length; i++) {
            char c = s.charAt(i);
            if (c < HIGH_BIT) {
                b[n++] = (byte) c;
            } else {
                n = put(b, n, c);
            }
        }
        out.write(b, 0, n);
    }

    private static int put(byte[] b, int n, int v) {
        while (v >= HIGH_BIT) {
            b[n++] = (byte) (v | HIGH_BIT);
            v >>>= 7;
        }
        b[n++] = (byte) v;
        return n;
    }

    @Override
    public String deserialize(DataInputView in) throws IOException {
        return StringValue.readString(in);
    }

    @Override
    public void copy(DataInputView in, DataOutputView out) throws IOException {
        StringValue.copyString(in, out);
    }

    @Override
    public TypeSerializerSnapshot<String> snapshotConfiguration() {
        return new Snapshot();
    }

    /** Reads state written by this serializer or by StringSerializer: the same bytes. */
    public static final class Snapshot extends FormatSnapshot<String> {
        public Snapshot() {
            super("string state");
        }

        @Override
        public TypeSerializer<String> restoreSerializer() {
            return INSTANCE;
        }

        @Override
        protected boolean sameBytesAs(TypeSerializerSnapshot<String> old) {
            return old instanceof StringSerializer.StringSerializerSnapshot;
        }
    }
}
