package io.tally.registry;

import java.util.ArrayList;
import java.util.List;

/**
 * A log for unit tests of the registry's logic: one shared, ordered list of records that
 * several instances (each with its own state) append to and replay, as they do with Kafka.
 */
final class InMemoryLog implements SchemaLog {
    static final class Shared {
        final List<String[]> records = new ArrayList<>();
    }

    final Shared shared;
    final RegistryState state;
    private int applied;
    Runnable beforeNextAppend;

    InMemoryLog(Shared shared, RegistryState state) {
        this.shared = shared;
        this.state = state;
    }

    @Override
    public void syncToEnd() {
        List<String[]> snapshot;
        synchronized (shared) {
            snapshot = new ArrayList<>(shared.records);
        }
        for (; applied < snapshot.size(); applied++) {
            state.apply(applied, snapshot.get(applied)[0], snapshot.get(applied)[1]);
        }
    }

    @Override
    public long append(String key, String value) {
        Runnable hook = beforeNextAppend;
        beforeNextAppend = null;
        if (hook != null) {
            hook.run(); // another instance writes first
        }
        long offset;
        synchronized (shared) {
            shared.records.add(new String[] {key, value});
            offset = shared.records.size() - 1;
        }
        syncToEnd();
        return offset;
    }
}
