package io.tally.gateway.service;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.tally.namespace.InvalidConfigException;
import io.tally.namespace.NamespaceConfig;
import io.tally.namespace.NamespaceConfigParser;
import io.tally.namespace.NamespaceName;
import io.tally.namespace.TimeSlicePlanner;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Properties;

/**
 * The control plane's source of truth: the namespaces table in Postgres (docs/design.md). Every
 * change is one transaction that bumps the row's version; an expected version that is not the
 * stored one is a 409 (optimistic concurrency). Only bound parameters, never concatenated SQL.
 * A connection per call: the admin API is low-rate, and a pool would hide Postgres being gone.
 */
public final class NamespaceStore {
    private static final ObjectMapper JSON = new ObjectMapper();

    /** A stored namespace. */
    public record Row(String name, String kind, JsonNode config, long version, String updatedAt) {
        public ObjectNode toJson() {
            ObjectNode n = JSON.createObjectNode().put("name", name).put("kind", kind);
            n.set("config", config);
            return n.put("version", version).put("updated_at", updatedAt);
        }
    }

    /** What a PUT did. */
    public record Put(Row row, boolean created, boolean changed) {}

    private final String url;
    private final Properties props = new Properties();

    public NamespaceStore(String url, String user, String password) {
        this.url = url;
        props.setProperty("user", user);
        props.setProperty("password", password);
        props.setProperty("connectTimeout", "3");
        props.setProperty("socketTimeout", "10");
        props.setProperty("ApplicationName", "tally-gateway");
    }

    public Connection connect() throws SQLException {
        return DriverManager.getConnection(url, props);
    }

    public List<Row> list() throws SQLException {
        try (Connection c = connect();
                PreparedStatement s = c.prepareStatement(SELECT + " ORDER BY name")) {
            List<Row> out = new ArrayList<>();
            try (ResultSet r = s.executeQuery()) {
                while (r.next()) {
                    out.add(row(r));
                }
            }
            return out;
        }
    }

    public Optional<Row> get(String name) throws SQLException {
        try (Connection c = connect()) {
            return get(c, name, false);
        }
    }

    /**
     * Creates or replaces a namespace's config. expectedVersion null = unconditional; 0 =
     * only if it does not exist yet; n = only if it is at version n. The kind of an existing
     * namespace cannot change (its stored data has the other shape): delete it first.
     */
    public Put put(NamespaceConfig parsed, JsonNode body, Long expectedVersion) throws SQLException {
        try (Connection c = connect()) {
            c.setAutoCommit(false);
            try {
                Optional<Row> current = get(c, parsed.name(), true);
                checkVersion(parsed.name(), current, expectedVersion);
                JsonNode config = withHistory(current.orElse(null), parsed, body, System.currentTimeMillis() * 1000);
                String kind = parsed.kind().name().toLowerCase();
                Put result;
                if (current.isEmpty()) {
                    refuseSharedKeyspace(c, parsed.name());
                    try (PreparedStatement s = c.prepareStatement(
                            "INSERT INTO namespaces (name, kind, config, version, updated_at) VALUES (?, ?, ?::jsonb, 1, now())")) {
                        s.setString(1, parsed.name());
                        s.setString(2, kind);
                        s.setString(3, config.toString());
                        s.executeUpdate();
                    }
                    result = new Put(get(c, parsed.name(), false).orElseThrow(), true, true);
                } else if (!current.get().kind().equals(kind)) {
                    throw new ServiceException(
                            ErrorCode.INVALID_NAMESPACE_CONFIG,
                            "namespace '" + parsed.name() + "' is a "
                                    + current.get().kind()
                                    + " namespace; its kind cannot change (delete it and create it again)",
                            "kind");
                } else if (bestEffortSwitch(parsed, current.get())) {
                    throw new ServiceException(
                            ErrorCode.INVALID_NAMESPACE_CONFIG,
                            "namespace '" + parsed.name() + "': counter_type cannot "
                                    + "change to or from BEST_EFFORT (its totals and the durable rollups are kept apart); create a new namespace "
                                    + "instead",
                            "counter_type");
                } else if (current.get().config().equals(JSON.readTree(config.toString()))) {
                    result =
                            new Put(current.get(), false, false); // nothing to change: no version bump, no change event
                } else {
                    try (PreparedStatement s = c.prepareStatement(
                            "UPDATE namespaces SET config = ?::jsonb, version = version + 1, updated_at = now() WHERE name = ?")) {
                        s.setString(1, config.toString());
                        s.setString(2, parsed.name());
                        s.executeUpdate();
                    }
                    result = new Put(get(c, parsed.name(), false).orElseThrow(), false, true);
                }
                c.commit();
                return result;
            } catch (SQLException e) {
                c.rollback();
                if ("23505".equals(e.getSQLState())) { // a concurrent create won
                    throw new ServiceException(
                            ErrorCode.VERSION_CONFLICT,
                            "namespace '" + parsed.name() + "' was created concurrently",
                            "version");
                }
                throw e;
            } catch (RuntimeException | com.fasterxml.jackson.core.JsonProcessingException e) {
                c.rollback();
                if (e instanceof RuntimeException re) {
                    throw re;
                }
                throw new IllegalStateException(e);
            }
        }
    }

    /**
     * Names map to keyspaces many-to-one ('.' becomes '_': a.b and a_b are both ns_a_b), so a
     * create whose keyspace another namespace has is refused, or the two would read, overwrite and
     * drop each other's data. The advisory lock (per keyspace, held to commit) makes two such
     * creates at once take turns.
     */
    private static void refuseSharedKeyspace(Connection c, String name) throws SQLException {
        String keyspace = NamespaceName.keyspace(name);
        try (PreparedStatement lock = c.prepareStatement("SELECT pg_advisory_xact_lock(?)")) {
            lock.setLong(1, Fnv64.of(keyspace));
            lock.execute();
        }
        try (PreparedStatement s =
                c.prepareStatement("SELECT name FROM namespaces WHERE replace(name, '.', '_') = ? AND name <> ?")) {
            s.setString(1, name.replace('.', '_'));
            s.setString(2, name);
            try (ResultSet r = s.executeQuery()) {
                while (r.next()) {
                    String other = r.getString(1);
                    if (NamespaceName.keyspace(other).equals(keyspace)) {
                        throw new ServiceException(
                                ErrorCode.NAMESPACE_STORAGE_TAKEN,
                                "namespace '" + name + "' would share keyspace " + keyspace + " with namespace '"
                                        + other + "' ('.' and '_' map to the same storage name); choose another name",
                                "name");
                    }
                }
            }
        }
    }

    /** Deletes a namespace (expectedVersion as in {@link #put}); the deleted row, or 404. */
    public Row delete(String name, Long expectedVersion) throws SQLException {
        try (Connection c = connect()) {
            c.setAutoCommit(false);
            try {
                Optional<Row> current = get(c, name, true);
                if (current.isEmpty()) {
                    throw new ServiceException(
                            ErrorCode.UNKNOWN_NAMESPACE, "namespace '" + name + "' does not exist", "name");
                }
                checkVersion(name, current, expectedVersion);
                try (PreparedStatement s = c.prepareStatement("DELETE FROM namespaces WHERE name = ?")) {
                    s.setString(1, name);
                    s.executeUpdate();
                }
                c.commit();
                return current.get();
            } catch (SQLException | RuntimeException e) {
                c.rollback();
                throw e;
            }
        }
    }

    private static boolean bestEffortSwitch(NamespaceConfig next, Row current) {
        NamespaceConfig before = NamespaceConfigParser.parse(current.name(), current.config());
        return (before.counterType() == NamespaceConfig.CounterType.BEST_EFFORT)
                != (next.counterType() == NamespaceConfig.CounterType.BEST_EFFORT);
    }

    /**
     * The config to store: the body with the partition history the control plane keeps (a
     * history in the body is ignored). A new time_partition applies from the first boundary of
     * both slice grids after the current and the next slice, which exist already.
     */
    public static JsonNode withHistory(Row current, NamespaceConfig next, JsonNode body, long nowMicros) {
        ObjectNode out = ((ObjectNode) body).deepCopy();
        out.remove(NamespaceConfigParser.HISTORY);
        if (current == null || !current.kind().equals(next.kind().name().toLowerCase())) {
            return out;
        }
        NamespaceConfig before = NamespaceConfigParser.parse(current.name(), current.config());
        List<NamespaceConfig.EarlierPartition> history = new ArrayList<>(before.partitionHistory());
        NamespaceConfig.EarlierPartition pending = history.isEmpty() ? null : history.get(history.size() - 1);
        if (before.timePartition().equals(next.timePartition())) {
            // unchanged
        } else if (pending != null && pending.untilMicros() > nowMicros) {
            // the last change has not taken effect yet (its boundary is ahead): this one replaces
            // it at the same boundary, and a change back to the partition before cancels it
            if (pending.partition().equals(next.timePartition())) {
                history.remove(history.size() - 1);
            }
        } else {
            TimeSlicePlanner old = new TimeSlicePlanner(before);
            long afterNext = old.sliceOf(old.sliceOf(nowMicros).endMicros()).endMicros();
            history.add(new NamespaceConfig.EarlierPartition(
                    TimeSlicePlanner.changeBoundary(before.timePartition(), next.timePartition(), afterNext),
                    before.timePartition()));
        }
        if (!history.isEmpty()) {
            var list = out.putArray(NamespaceConfigParser.HISTORY);
            history.forEach(e -> list.add(NamespaceConfigParser.historyEntry(e)));
        }
        try {
            NamespaceConfigParser.parse(current.name(), out); // the stored config validates as a whole
        } catch (InvalidConfigException e) {
            throw new ServiceException(
                    ErrorCode.INVALID_NAMESPACE_CONFIG,
                    "time_partition cannot change to this now: " + e.getMessage()
                            + " (a change takes effect at a slice boundary of both partitions)",
                    "time_partition");
        }
        return out;
    }

    private static void checkVersion(String name, Optional<Row> current, Long expected) {
        if (expected == null) {
            return;
        }
        long actual = current.map(Row::version).orElse(0L);
        if (actual != expected) {
            throw new ServiceException(
                    ErrorCode.VERSION_CONFLICT,
                    current.isEmpty()
                            ? "namespace '" + name + "' does not exist (expected version " + expected + ")"
                            : "namespace '" + name + "' is at version " + actual + ", not " + expected
                                    + ": read it again and retry",
                    "version");
        }
    }

    private static final String SELECT = "SELECT name, kind, config::text AS config, version, "
            + "to_char(updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"') AS updated_at FROM namespaces";

    private static Optional<Row> get(Connection c, String name, boolean forUpdate) throws SQLException {
        try (PreparedStatement s = c.prepareStatement(SELECT + " WHERE name = ?" + (forUpdate ? " FOR UPDATE" : ""))) {
            s.setString(1, name);
            try (ResultSet r = s.executeQuery()) {
                return r.next() ? Optional.of(row(r)) : Optional.empty();
            }
        }
    }

    private static Row row(ResultSet r) throws SQLException {
        try {
            return new Row(
                    r.getString("name"),
                    r.getString("kind"),
                    JSON.readTree(r.getString("config")),
                    r.getLong("version"),
                    r.getString("updated_at"));
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new SQLException("stored config of " + r.getString("name") + " is not JSON", e);
        }
    }
}
