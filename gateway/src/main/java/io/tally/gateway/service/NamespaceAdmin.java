package io.tally.gateway.service;

import com.fasterxml.jackson.databind.JsonNode;
import io.tally.namespace.InvalidConfigException;
import io.tally.namespace.NamespaceCatalog;
import io.tally.namespace.NamespaceConfig;
import io.tally.namespace.NamespaceConfigParser;
import io.tally.namespace.NamespaceName;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;

/**
 * The control plane's admin operations (list, get, create or replace, delete a namespace) over
 * {@link NamespaceStore}, with the version this gateway applies beside each stored one. A config
 * is validated before it is written (every error names its field); optimistic concurrency by
 * expected version (0: create only). Postgres being down is CONTROL_PLANE_UNAVAILABLE: the data
 * plane keeps serving its last configs.
 */
public final class NamespaceAdmin {
    /** A stored namespace and the version this gateway applies now (0: not yet streamed to it). */
    public record Namespace(NamespaceStore.Row row, long appliedVersion) {}

    /** What a create-or-replace did. */
    public record Put(NamespaceStore.Row row, boolean created, boolean changed) {}

    private final NamespaceStore store;
    private final NamespaceCatalog catalog;
    private final Predicate<String> storageLeft;

    /**
     * @param storageLeft whether a namespace's storage (its keyspace) still exists: a name whose
     *     namespace was deleted is free again only once the jobs retired that, so a namespace
     *     created again never meets the old one's data
     */
    public NamespaceAdmin(NamespaceStore store, NamespaceCatalog catalog, Predicate<String> storageLeft) {
        this.store = store;
        this.catalog = catalog;
        this.storageLeft = storageLeft;
    }

    public List<Namespace> list() {
        List<Namespace> out = new ArrayList<>();
        for (NamespaceStore.Row row : controlPlane(store::list)) {
            out.add(withApplied(row));
        }
        return out;
    }

    public Namespace get(String name) {
        requireName(name);
        return withApplied(controlPlane(() -> store.get(name)).orElseThrow(() -> unknown(name)));
    }

    /** @param config the config as sent (JSON of docs/design.md); stored as given once it validates */
    public Put put(String name, JsonNode config, Long expectedVersion) {
        requireName(name);
        NamespaceConfig parsed;
        try {
            parsed = NamespaceConfigParser.parse(name, config);
        } catch (InvalidConfigException e) {
            throw new ServiceException(ErrorCode.INVALID_NAMESPACE_CONFIG, e.getMessage(), e.field());
        }
        if (storageLeft.test(name) && controlPlane(() -> store.get(name)).isEmpty()) {
            throw new ServiceException(
                    ErrorCode.NAMESPACE_RETIRING,
                    "a namespace '" + name + "' was deleted and its data is still being removed; create it again"
                            + " in a few seconds (a new namespace never sees the old one's data)",
                    "name");
        }
        NamespaceStore.Put put = controlPlane(() -> store.put(parsed, config, expectedVersion));
        return new Put(put.row(), put.created(), put.changed());
    }

    public NamespaceStore.Row delete(String name, Long expectedVersion) {
        requireName(name);
        return controlPlane(() -> store.delete(name, expectedVersion));
    }

    private Namespace withApplied(NamespaceStore.Row row) {
        return new Namespace(row, catalog.get(row.name()).isPresent() ? catalog.version(row.name()) : 0);
    }

    private static void requireName(String name) {
        try {
            NamespaceName.require(name, "name");
        } catch (InvalidConfigException e) {
            throw new ServiceException(ErrorCode.INVALID_NAMESPACE_NAME, e.getMessage(), "name");
        }
    }

    private static ServiceException unknown(String name) {
        return new ServiceException(ErrorCode.UNKNOWN_NAMESPACE, "namespace '" + name + "' does not exist", "name");
    }

    private interface StoreCall<T> {
        T call() throws SQLException;
    }

    private static <T> T controlPlane(StoreCall<T> call) {
        try {
            return call.call();
        } catch (SQLException e) {
            throw new ServiceException(
                    ErrorCode.CONTROL_PLANE_UNAVAILABLE,
                    "the control plane (Postgres) cannot take this request now; the data plane keeps its last configs: "
                            + e.getMessage(),
                    null);
        }
    }
}
