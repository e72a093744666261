package io.tally.jobs.cassandra;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.config.DefaultDriverOption;
import com.datastax.oss.driver.api.core.config.DriverConfigLoader;
import com.datastax.oss.driver.api.core.cql.Statement;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Asynchronous Cassandra writes, bounded in flight, that a sink waits for before a checkpoint
 * completes. The first failure fails the next call, so the job restarts from its last
 * checkpoint and rewrites (every write Tally makes is an idempotent upsert).
 */
public final class AsyncCqlWrites implements AutoCloseable {
    private final CqlSession session;
    private final Semaphore inFlight;
    private final int maxInFlight;
    private final AtomicReference<Throwable> failure = new AtomicReference<>();

    public AsyncCqlWrites(String host, int port, int maxInFlight) {
        this(session(host, port), maxInFlight);
    }

    /**
     * A session for the jobs: writes keep the driver's 2 s timeout, but schema changes (a new
     * keyspace or slice table) get 20 s, since a busy node can take longer than 2 s to agree on
     * them and a timeout there would restart the job for nothing.
     */
    public static CqlSession session(String host, int port) {
        return CqlSession.builder()
                .addContactPoint(new InetSocketAddress(host, port))
                .withLocalDatacenter("datacenter1")
                .withConfigLoader(DriverConfigLoader.programmaticBuilder()
                        .withDuration(DefaultDriverOption.REQUEST_TIMEOUT, Duration.ofSeconds(20))
                        .withDuration(DefaultDriverOption.CONTROL_CONNECTION_AGREEMENT_TIMEOUT, Duration.ofSeconds(20))
                        .build())
                .build();
    }

    public AsyncCqlWrites(CqlSession session, int maxInFlight) {
        this.session = session;
        this.maxInFlight = maxInFlight;
        this.inFlight = new Semaphore(maxInFlight);
    }

    public CqlSession session() {
        return session;
    }

    public void submit(Statement<?> statement) throws IOException, InterruptedException {
        rethrow();
        inFlight.acquire();
        session.executeAsync(statement).whenComplete((rs, err) -> {
            if (err != null) {
                failure.compareAndSet(null, err);
            }
            inFlight.release();
        });
    }

    /** Waits for every write in flight: called before a checkpoint and at the end of input. */
    public void flush() throws IOException, InterruptedException {
        if (!inFlight.tryAcquire(maxInFlight, 120, TimeUnit.SECONDS)) {
            throw new IOException("Cassandra writes did not complete within 120 s");
        }
        inFlight.release(maxInFlight);
        rethrow();
    }

    private void rethrow() throws IOException {
        Throwable t = failure.get();
        if (t != null) {
            throw new IOException("a Cassandra write failed (the job restarts from its last checkpoint): " + t, t);
        }
    }

    @Override
    public void close() {
        session.close();
    }
}
