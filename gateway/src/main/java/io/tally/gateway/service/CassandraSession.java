package io.tally.gateway.service;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.DriverException;
import io.tally.gateway.service.ServiceException.Kind;
import java.net.InetSocketAddress;

/**
 * The gateway's one Cassandra session, shared by the readers (injected, not made by each):
 * connected on first use, so the gateway starts and takes writes while Cassandra is down, and a
 * read then is refused as CASSANDRA_UNAVAILABLE.
 */
public final class CassandraSession implements AutoCloseable {
    private final String host;
    private final int port;
    private volatile CqlSession session;

    /** @param hostPort host:port of a contact point (the port defaults to 9042) */
    public CassandraSession(String hostPort) {
        String[] hp = hostPort.split(":");
        this.host = hp[0];
        this.port = hp.length > 1 ? Integer.parseInt(hp[1]) : 9042;
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
                        session = CqlSession.builder()
                                .addContactPoint(new InetSocketAddress(host, port))
                                .withLocalDatacenter("datacenter1")
                                .build();
                    } catch (DriverException e) {
                        throw new ServiceException(
                                Kind.UNAVAILABLE,
                                "CASSANDRA_UNAVAILABLE",
                                "Cassandra is unreachable: " + e.getMessage(),
                                null);
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
