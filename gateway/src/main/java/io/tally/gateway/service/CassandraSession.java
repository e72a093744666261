package io.tally.gateway.service;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.DefaultConsistencyLevel;
import com.datastax.oss.driver.api.core.DriverException;
import com.datastax.oss.driver.api.core.config.DefaultDriverOption;
import com.datastax.oss.driver.api.core.config.DriverConfigLoader;
import io.tally.common.CassandraClientSecurity;
import io.tally.common.CassandraLogin;
import java.net.InetSocketAddress;
import java.util.Arrays;
import java.util.List;
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

    @Override
    public void close() {
        CqlSession s = session;
        if (s != null) {
            s.close();
        }
    }
}
