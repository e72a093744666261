package io.tally.jobs.state;

import java.io.IOException;
import org.apache.flink.api.common.typeutils.TypeSerializerSchemaCompatibility;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;

/**
 * The snapshot of a {@link HandWrittenSerializer}: a format version and nothing else (the
 * serializer has no configuration). Written into every checkpoint beside the state; on restore it
 * says which state it reads: its own format as is, the bytes of another serializer that writes
 * the same ones ({@link #sameBytesAs}), or state it takes over after Flink migrates it
 * ({@link #migratesFrom}: read with the old serializer, written with this one).
 *
 * <p>Version 1; a change of format needs version 2 and a read of version 1. A subclass needs a
 * public constructor without arguments (Flink makes it by name).
 */
public abstract class FormatSnapshot<T> implements TypeSerializerSnapshot<T> {
    private static final int VERSION = 1;
    private final String what;

    /** @param what the state it describes, for the error a newer format gets */
    protected FormatSnapshot(String what) {
        this.what = what;
    }

    /** Whether state written with `old` has exactly this serializer's bytes. */
    protected boolean sameBytesAs(TypeSerializerSnapshot<T> old) {
        return false;
    }

    /** Whether state written with `old` can be read with it and written again with this one. */
    protected boolean migratesFrom(TypeSerializerSnapshot<T> old) {
        return false;
    }

    @Override
    public final int getCurrentVersion() {
        return VERSION;
    }

    @Override
    public final void writeSnapshot(DataOutputView out) {}

    @Override
    public final void readSnapshot(int readVersion, DataInputView in, ClassLoader loader) throws IOException {
        if (readVersion != VERSION) {
            throw new IOException(what + " of format " + readVersion + " is newer than this job (" + VERSION + ")");
        }
    }

    @Override
    public final TypeSerializerSchemaCompatibility<T> resolveSchemaCompatibility(TypeSerializerSnapshot<T> old) {
        if (old.getClass() == getClass() || sameBytesAs(old)) {
            return TypeSerializerSchemaCompatibility.compatibleAsIs();
        }
        if (migratesFrom(old)) {
            return TypeSerializerSchemaCompatibility.compatibleAfterMigration();
        }
        return TypeSerializerSchemaCompatibility.incompatible();
    }
}
