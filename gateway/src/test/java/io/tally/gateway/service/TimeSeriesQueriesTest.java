package io.tally.gateway.service;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tally.gateway.service.ServiceException.Kind;
import io.tally.gateway.service.TimeSeriesQueries.ReadQuery;
import io.tally.namespace.NamespaceCatalog;
import io.tally.namespace.NamespaceConfig;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The read service's refusals that come before any slice is read: the interval and the page
 * token. Cassandra is not running here (a port nothing listens on) and is never asked.
 */
class TimeSeriesQueriesTest {
    static final long HOUR = 3_600_000_000L;
    final NamespaceConfig playback;
    final PageTokens tokens = new PageTokens("test-secret");
    final TimeSeriesQueries queries = new TimeSeriesQueries(new CassandraSession("127.0.0.1:1"), tokens);

    TimeSeriesQueriesTest() throws Exception {
        playback = NamespaceCatalog.fromDirectory(Path.of("../infra/namespaces"))
                .get("playback")
                .orElseThrow();
    }

    ReadQuery query(long start, long end, String token) {
        return new ReadQuery(
                playback, "p1", start, end, List.of(), 100, 1000, token, TimeSeriesQueries.DEFAULT_PAGE_BYTES);
    }

    @Test
    void aPageBehindTheStoredHorizonIsServedFromTheCacheWithoutCassandra() throws Exception {
        long writerStoredBefore = 100 * HOUR / 1000; // ms: far after the pages below
        var horizon = new StoredHorizon(() -> writerStoredBefore, 0, 0, System::nanoTime);
        var cache = new ClosedPageCache(1 << 20, 60_000, System::currentTimeMillis);
        List<String> results = new java.util.ArrayList<>();
        var cached =
                new TimeSeriesQueries(new CassandraSession("127.0.0.1:1"), tokens, 2_000, horizon, cache, results::add);
        ReadQuery closed = query(10 * HOUR, 11 * HOUR, null);
        var kept = new TimeSeriesQueries.EventPage(
                List.of(new TimeSeriesQueries.Event(10 * HOUR + 5, "e1", List.of())), null);
        cache.put(
                new ClosedPageCache.Key(
                        playback,
                        "p1",
                        TimeSeriesQueries.queryDigest("playback", "p1", 10 * HOUR, 11 * HOUR, List.of()),
                        null,
                        100,
                        1000,
                        TimeSeriesQueries.DEFAULT_PAGE_BYTES),
                kept,
                Long.MAX_VALUE);
        // kept() asks nothing of Cassandra: null until the horizon is known, then the page
        StoredHorizonTest.waitFor(
                () -> cached.kept(closed) != null && cached.kept(closed).page() == kept);
        results.clear();
        assertThat(cached.read(closed)).isSameAs(kept);
        assertThat(results).containsExactly("hit");
        // not kept: a page reaching past the horizon, another page of a closed query (no miss counted)
        assertThat(cached.kept(query(10 * HOUR, 200 * HOUR, null))).isNull();
        assertThat(cached.kept(query(9 * HOUR, 11 * HOUR, null))).isNull();
        assertThat(results).containsExactly("hit");
        // kept() refuses what read() refuses
        assertThatThrownBy(() -> cached.kept(query(11 * HOUR, 10 * HOUR, null)))
                .isInstanceOfSatisfying(
                        ServiceException.class, e -> assertThat(e.field()).isEqualTo("timeInterval"));
        // a page reaching past the horizon is read from Cassandra (down here)
        assertThatThrownBy(() -> cached.read(query(10 * HOUR, 200 * HOUR, null)))
                .isInstanceOfSatisfying(
                        ServiceException.class, e -> assertThat(e.code()).isEqualTo("CASSANDRA_UNAVAILABLE"));
        cached.close();
    }

    @Test
    void anEmptyOrTooLongIntervalIsRefused() {
        for (ReadQuery q : List.of(
                query(10 * HOUR, 10 * HOUR, null),
                query(10 * HOUR, 9 * HOUR, null),
                query(0, TimeSeriesQueries.MAX_INTERVAL_MICROS + 1, null))) {
            assertThatThrownBy(() -> queries.read(q)).isInstanceOfSatisfying(ServiceException.class, e -> {
                assertThat(e.kind()).isEqualTo(Kind.INVALID);
                assertThat(e.field()).isEqualTo("timeInterval");
            });
        }
    }

    @Test
    void aForgedTokenOrOneOfAnotherQueryIsRefused() {
        assertThatThrownBy(() -> queries.read(query(0, HOUR, "bm90LWEtdG9rZW4.c2ln")))
                .isInstanceOfSatisfying(ServiceException.class, e -> {
                    assertThat(e.code()).isEqualTo("INVALID_PAGE_TOKEN");
                    assertThat(e.field()).isEqualTo("pageToken");
                });
        String another = tokens.encode(new PageTokens.Cursor(5, "e1", 100), 42);
        assertThatThrownBy(() -> queries.read(query(0, HOUR, another)))
                .isInstanceOfSatisfying(
                        ServiceException.class, e -> assertThat(e.getMessage()).contains("another query"));
    }

    @Test
    void anUnreachableStoreIsUnavailable() {
        assertThatThrownBy(() -> queries.read(query(0, HOUR, null)))
                .isInstanceOfSatisfying(ServiceException.class, e -> {
                    assertThat(e.kind()).isEqualTo(Kind.UNAVAILABLE);
                    assertThat(e.code()).isEqualTo("CASSANDRA_UNAVAILABLE");
                });
    }

    @Test
    void aReadOverMoreSlicesThanTheCapIsRefusedBeforeAnyIsPlanned() {
        NamespaceConfig minute = io.tally.namespace.NamespaceConfigParser.parse(
                "minutes",
                "{\"kind\":\"timeseries\",\"time_partition\":{\"seconds_per_slice\":60,\"seconds_per_bucket\":1,"
                        + "\"buckets_per_id\":64}}");
        var q = new ReadQuery(
                minute,
                "p1",
                0,
                TimeSeriesQueries.MAX_INTERVAL_MICROS,
                List.of(),
                100,
                1000,
                null,
                TimeSeriesQueries.DEFAULT_PAGE_BYTES);
        assertThatThrownBy(() -> queries.read(q)).isInstanceOfSatisfying(ServiceException.class, e -> {
            assertThat(e.code()).isEqualTo("READ_TOO_WIDE");
            assertThat(e.field()).isEqualTo("timeInterval");
        });
    }
}
