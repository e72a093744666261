package io.tally.jobs.control;

import io.tally.namespace.InvalidConfigException;
import io.tally.namespace.NamespaceChange;
import io.tally.namespace.NamespaceConfig;
import io.tally.namespace.Namespaces;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import org.apache.flink.api.common.state.ReadOnlyBroadcastState;

/**
 * An operator's view of the broadcast namespaces: the config of a name's last change unless
 * it was a delete. Parsed once per version (the state holds JSON), not per record.
 */
public final class LiveNamespaces implements Namespaces {
    private final Map<String, NamespaceChange> parsedFrom = new HashMap<>();
    private final Map<String, NamespaceConfig> parsed = new HashMap<>();
    private ReadOnlyBroadcastState<String, NamespaceChange> state;

    /** Points the view at the state of the current call (Flink hands it out per call). */
    public LiveNamespaces over(ReadOnlyBroadcastState<String, NamespaceChange> state) {
        this.state = state;
        return this;
    }

    @Override
    public Optional<NamespaceConfig> get(String name) {
        NamespaceChange change;
        try {
            change = state.get(name);
        } catch (Exception e) {
            throw new IllegalStateException("broadcast state", e);
        }
        if (change == null || change.deleted) {
            return Optional.empty();
        }
        if (!change.equals(parsedFrom.get(name))) {
            try {
                parsed.put(name, change.config());
            } catch (InvalidConfigException e) {
                return Optional.empty(); // written around the admin API's validation: treated as unknown
            }
            parsedFrom.put(name, change);
        }
        return Optional.ofNullable(parsed.get(name));
    }

    /** When the live namespace of this name was created ({@link NamespaceChange#createdMicros}; 0: unknown). */
    public long createdMicros(String name) {
        try {
            NamespaceChange change = state.get(name);
            return change == null ? 0 : change.createdMicros;
        } catch (Exception e) {
            throw new IllegalStateException("broadcast state", e);
        }
    }

    /** The configs of the last changes that were not deletes. */
    public Map<String, NamespaceConfig> all() throws Exception {
        Map<String, NamespaceConfig> out = new java.util.TreeMap<>();
        for (Map.Entry<String, NamespaceChange> e : state.immutableEntries()) {
            get(e.getKey()).ifPresent(c -> out.put(e.getKey(), c));
        }
        return out;
    }
}
