package io.tally.gateway.service;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.DefaultConsistencyLevel;
import com.datastax.oss.driver.api.core.DriverException;
import com.datastax.oss.driver.api.core.config.DefaultDriverOption;
import com.datastax.oss.driver.api.core.config.DriverConfigLoader;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import com.datastax.oss.driver.api.core.cql.Row;
import com.datastax.oss.driver.api.core.cql.SimpleStatement;
import com.datastax.oss.driver.api.core.metadata.Metadata;
import com.datastax.oss.driver.api.core.servererrors.InvalidQueryException;
import io.tally.common.CassandraClientSecurity;
import io.tally.common.CassandraLogin;
import io.tally.model.cassandra.MissingSchemaRefusal;
import java.net.InetSocketAddress;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The gateway's one Cassandra session, shared by the readers (injected, not made by each):
 * connected on first use, so the gateway starts and takes writes while Cassandra is down, and a
 * read then is refused as CASSANDRA_UNAVAILABLE. The gateway also connects it in the background
 * as it starts ({@link #connectInBackground}): a session's set-up (control connection, schema,
 * pools) is seconds, and every read waits for it; met first during a node's outage, it held reads
 * past 15 s in the three-node suite.
 */
public final class CassandraSession implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(CassandraSession.class);

    private final List<InetSocketAddress> contacts;
    private final String datacenter;
    private final String consistency;
    private volatile CqlSession session;

    private final CassandraClientSecurity security;

    /** How often, at most, a session without schema metadata asks the driver to read it again. */
    static final long SCHEMA_REFRESH_EVERY_NANOS = TimeUnit.SECONDS.toNanos(2);
    /** When the driver was last asked to read the schema again (nanoTime). */
    private final AtomicLong schemaRefreshedAt = new AtomicLong(System.nanoTime() - SCHEMA_REFRESH_EVERY_NANOS);

    /** One contact point on one node, read at ONE, no login (tests). */
    public CassandraSession(String hostPort) {
        this(hostPort, "datacenter1", "ONE", CassandraClientSecurity.NONE);
    }

    /**
     * @param hostPorts host:port of each contact point, comma-separated (the port defaults to 9042)
     * @param datacenter the local datacenter
     * @param consistency the consistency level of every read (the driver's name, e.g. LOCAL_QUORUM)
     * @param security the login and TLS of the connections
     */
    public CassandraSession(String hostPorts, String datacenter, String consistency, CassandraClientSecurity security) {
        this.security = security;
        this.contacts = Arrays.stream(hostPorts.split(","))
                .map(String::trim)
                .map(hp -> {
                    String[] parts = hp.split(":");
                    return InetSocketAddress.createUnresolved(
                            parts[0], parts.length > 1 ? Integer.parseInt(parts[1]) : 9042);
                })
                .toList();
        this.datacenter = datacenter;
        this.consistency = DefaultConsistencyLevel.valueOf(consistency).name(); // refused at start if unknown
    }

    /** Connects now on a thread of its own; a failure is logged and the first read tries again. */
    public void connectInBackground() {
        Thread t = new Thread(
                () -> {
                    try {
                        get();
                    } catch (RuntimeException e) {
                        LOG.warn("Cassandra not connected at start ({}); the first read tries again", e.getMessage());
                    }
                },
                "cassandra-connect");
        t.setDaemon(true);
        t.start();
    }

    /** How long a statement refused for a missing table the schema lists is prepared again. */
    static final long SCHEMA_SETTLE_MILLIS = 2_000;

    /**
     * Prepares a statement over a table the schema lists (the driver's metadata or Cassandra's
     * catalogue, {@link #hasTable}). A table being made is in system_schema.tables a moment
     * before the node's query processor knows it, and a node just back from a restart lags the
     * cluster's schema: both refuse the prepare with "does not exist" for a table that is there
     * (the read of 2026-12-07 of a day's table the TimeSeries writer was making, answered 503).
     * So that refusal is asked again for up to {@link #SCHEMA_SETTLE_MILLIS}, then passed on.
     * Blocks: not for the event loop.
     */
    public PreparedStatement prepareListed(String cql) {
        return untilSchemaSettles(() -> get().prepare(cql), SCHEMA_SETTLE_MILLIS, CassandraSession::pause);
    }

    /** A pause between two asks of {@link #untilSchemaSettles}. */
    interface Pause {
        void millis(long millis);
    }

    static <T> T untilSchemaSettles(Supplier<T> call, long budgetMillis, Pause pause) {
        long waited = 0;
        long next = 25;
        while (true) {
            try {
                return call.get();
            } catch (InvalidQueryException e) {
                if (!MissingSchemaRefusal.saysMissing(e.getMessage()) || waited >= budgetMillis) {
                    throw e;
                }
                long wait = Math.min(next, budgetMillis - waited);
                pause.millis(wait);
                waited += wait;
                next *= 2;
            }
        }
    }

    private static void pause(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ServiceException(
                    ErrorCode.CASSANDRA_UNAVAILABLE, "interrupted while Cassandra's schema settled", null);
        }
    }

    /** The session if it is connected already (never blocks), else null. */
    public CqlSession ifOpen() {
        return session;
    }

    public CqlSession get() {
        CqlSession s = session;
        if (s == null) {
            synchronized (this) {
                if (session == null) {
                    try {
                        var builder = CqlSession.builder()
                                .withLocalDatacenter(datacenter)
                                .withConfigLoader(DriverConfigLoader.programmaticBuilder()
                                        .withString(DefaultDriverOption.REQUEST_CONSISTENCY, consistency)
                                        .build());
                        for (InetSocketAddress contact : contacts) {
                            builder.addContactPoint(new InetSocketAddress(contact.getHostString(), contact.getPort()));
                        }
                        session = CassandraLogin.applied(builder, security).build();
                    } catch (DriverException e) {
                        throw new ServiceException(
                                ErrorCode.CASSANDRA_UNAVAILABLE, "Cassandra is unreachable: " + e.getMessage(), null);
                    }
                }
                s = session;
            }
        }
        return s;
    }

    /**
     * The schema the readers decide "this namespace has no such table yet" by, refused (503
     * CASSANDRA_UNAVAILABLE) while it holds no keyspace at all. The driver keeps empty metadata
     * when its first schema read fails (a timeout on a loaded node, a node just back from a kill)
     * and completes the session anyway; every table would then look absent, and a GetCount would
     * answer 0, a page no events, where the answer is unknown. A cluster Tally is deployed on
     * always holds tally_meta, so no keyspace means none was read: the driver is asked to read the
     * schema again, at most every {@link #SCHEMA_REFRESH_EVERY_NANOS}, and the read is refused.
     */
    public Metadata schema() {
        return loadedOrRefused(get().getMetadata(), this::readSchemaAgain);
    }

    /**
     * Whether the driver's schema metadata holds the table ({@link #schema()}: refused while it
     * holds none). Never blocks, so the event loop may ask; a "no" may be stale (see
     * {@link #hasTable}), and is to be confirmed off the loop.
     */
    public boolean knownTable(String keyspace, String table) {
        return schema().getKeyspace(keyspace).flatMap(k -> k.getTable(table)).isPresent();
    }

    /**
     * Whether a namespace's keyspace holds the table. The driver's metadata answers "yes" at once;
     * its "no" is asked of Cassandra's own catalogue (system_schema.tables, one query a keyspace at
     * most every {@link #CATALOGUE_FOR_NANOS}), because the metadata misses every table made while
     * its control connection was down: a node killed and back, the driver keeps its previous
     * schema and hears of no change made meanwhile (the gateway of 2026-12-03 read no event of any
     * namespace made in the 37 minutes after Cassandra's restart). A table found that way has the
     * driver read the schema again. Blocks for the query: not for the event loop.
     */
    public boolean hasTable(String keyspace, String table) {
        if (knownTable(keyspace, table)) {
            return true;
        }
        boolean there;
        try {
            there = catalogue.tablesOf(keyspace).contains(table);
        } catch (DriverException e) {
            throw new ServiceException(
                    ErrorCode.CASSANDRA_UNAVAILABLE,
                    "Cassandra's table catalogue could not be read: " + e.getMessage(),
                    null);
        }
        if (there && schemaRefreshDue()) {
            LOG.warn("reading Cassandra's schema again: its metadata missed table {}.{}", keyspace, table);
            readSchemaAgain();
        }
        return there;
    }

    /** How long a keyspace's tables as Cassandra's catalogue listed them are taken as they were. */
    static final long CATALOGUE_FOR_NANOS = TimeUnit.SECONDS.toNanos(2);

    private final TableCatalogue catalogue = new TableCatalogue(
            keyspace -> {
                java.util.Set<String> tables = new java.util.HashSet<>();
                for (Row r : get().execute(SimpleStatement.newInstance(
                        "SELECT table_name FROM system_schema.tables WHERE keyspace_name = ?", keyspace))) {
                    tables.add(r.getString(0));
                }
                return tables;
            },
            CATALOGUE_FOR_NANOS,
            System::nanoTime);

    /** Whether the driver may be asked to read the schema again now (at most every {@link #SCHEMA_REFRESH_EVERY_NANOS}). */
    private boolean schemaRefreshDue() {
        long now = System.nanoTime();
        long last = schemaRefreshedAt.get();
        return now - last >= SCHEMA_REFRESH_EVERY_NANOS && schemaRefreshedAt.compareAndSet(last, now);
    }

    private void readSchemaAgain() {
        get().refreshSchemaAsync().whenComplete((m, err) -> {
            if (err != null) {
                LOG.warn("reading Cassandra's schema again failed: {}", err.getMessage());
            }
        });
    }

    /** The metadata when it holds a keyspace; else a refresh asked (rate-limited) and the read refused. */
    Metadata loadedOrRefused(Metadata metadata, Runnable refresh) {
        if (!metadata.getKeyspaces().isEmpty()) {
            return metadata;
        }
        if (schemaRefreshDue()) {
            LOG.warn("the Cassandra driver holds no schema (its schema read failed); reading it again");
            refresh.run();
        }
        throw ServiceException.unavailable(
                ErrorCode.CASSANDRA_UNAVAILABLE,
                "the gateway has not read Cassandra's schema yet (the driver's schema read failed); retry shortly");
    }

    @Override
    public void close() {
        CqlSession s = session;
        if (s != null) {
            s.close();
        }
    }
}
