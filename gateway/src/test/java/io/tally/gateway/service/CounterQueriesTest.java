package io.tally.gateway.service;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tally.gateway.service.ServiceException.Kind;
import io.tally.namespace.NamespaceCatalog;
import java.nio.file.Path;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.Test;

/**
 * The counter services without a Cassandra (a port nothing listens on): a read is refused as
 * unavailable, never as an internal error, and a recount of a type without an event log is
 * refused before anything is read.
 */
class CounterQueriesTest {
    final NamespaceCatalog catalog;
    final CassandraSession cassandra = new CassandraSession("127.0.0.1:1");
    final TimeSeriesQueries events = new TimeSeriesQueries(cassandra, new PageTokens("test-secret"));
    final CounterQueries counters = new CounterQueries(events, cassandra, (type, seconds) -> {});

    CounterQueriesTest() throws Exception {
        catalog = NamespaceCatalog.fromDirectory(Path.of("../infra/namespaces"));
    }

    @Test
    void aReadWithoutCassandraIsUnavailable() {
        var ns = catalog.get("video_views").orElseThrow();
        assertThatThrownBy(
                        () -> counters.getCount(ns, "c1").toCompletableFuture().join())
                .isInstanceOf(CompletionException.class)
                .cause()
                .isInstanceOfSatisfying(ServiceException.class, e -> {
                    assertThat(e.kind()).isEqualTo(Kind.UNAVAILABLE);
                    assertThat(e.code()).isEqualTo("CASSANDRA_UNAVAILABLE");
                });
    }

    @Test
    void aBestEffortCounterHasNoLogToRecount() {
        var bestEffort = catalog.all().stream()
                .filter(n -> n.kind() == io.tally.namespace.NamespaceConfig.Kind.COUNTER)
                .filter(n -> !n.counterType().durable())
                .findFirst()
                .orElseThrow();
        CounterRecount recount = new CounterRecount(
                counters,
                events,
                cassandra,
                records -> {
                    throw new AssertionError("no repair here");
                },
                name -> 1,
                name -> 1);
        assertThatThrownBy(() -> recount.recount(new CounterRecount.Request(bestEffort, "c1", null, null, false)))
                .isInstanceOfSatisfying(ServiceException.class, e -> {
                    assertThat(e.code()).isEqualTo("NO_EVENT_LOG");
                    assertThat(e.field()).isEqualTo("namespace");
                });
    }

    @Test
    void anAccurateScanStartsAtTheRollupButNoEarlierThanTheWindowEventsCanStillWaitIn() {
        var adClicks = catalog.get("ad_clicks").orElseThrow(); // accept 5 s, skew 0.5 s, coalesce 1 s
        long now = 1_800_000_000_000_000L;
        long window = (5_000 + 500 + 2 * 1_000) * 1000L + CounterQueries.ROLLUP_LAG_MARGIN_MICROS;
        assertThat(CounterQueries.scanFrom(adClicks, now - 2_000_000, now)).isEqualTo(now - 2_000_000);
        // an idle counter rolled up a day ago: a few recent partitions, not a day of buckets
        assertThat(CounterQueries.scanFrom(adClicks, now - 86_400_000_000L, now))
                .isEqualTo(now - window);
        assertThat(CounterQueries.scanFrom(adClicks, 0, now)).isEqualTo(now - 3_600_000_000L); // no rollup yet
    }

    @Test
    void aCountTheViewHoldsIsAnsweredWithoutCassandraAndOnlyFromARecordOfItsKind() throws Exception {
        try (CounterView view = viewNothingFeeds()) {
            CounterQueries withView = over(view);
            var accurate = catalog.get("ad_clicks").orElseThrow();
            var eventual = catalog.get("video_views").orElseThrow();
            long now = System.currentTimeMillis() * 1000;
            // a live total just after a write: its newest event is after its rollup, and no scan is made
            view.applied("ad_clicks", "c1", new CounterView.Rollup(7, now - 10_000_000, now - 1_000, true));
            assertThat(count(withView, accurate, "c1")).isEqualTo(7);
            view.applied("video_views", "c1", new CounterView.Rollup(3, now - 10_000_000, now - 20_000_000, false));
            assertThat(count(withView, eventual, "c1")).isEqualTo(3);
            // a live total where an EVENTUAL count is asked (its type changed): Cassandra answers (here: unreachable)
            view.applied("video_views", "c2", new CounterView.Rollup(5, now - 10_000_000, now - 1_000, true));
            assertThatThrownBy(() -> withView.getCount(eventual, "c2")
                            .toCompletableFuture()
                            .join())
                    .hasCauseInstanceOf(ServiceException.class);
        }
    }

    @Test
    void aCounterRememberedAsNeverRolledUpGivesWayToItsFirstRollup() throws Exception {
        try (CounterView view = viewNothingFeeds()) {
            CounterQueries withView = over(view);
            var eventual = catalog.get("video_views").orElseThrow();
            view.applied("video_views", "other", new CounterView.Rollup(1, 1, 1, false)); // the view is rebuilt
            view.remember("video_views", "c1", new CounterView.Rollup(0, 0, 0, false));
            assertThat(count(withView, eventual, "c1")).isZero(); // answered without Cassandra (unreachable here)
            long now = System.currentTimeMillis() * 1000;
            view.applied("video_views", "c1", new CounterView.Rollup(3, now - 10_000_000, now - 20_000_000, false));
            assertThat(count(withView, eventual, "c1")).isEqualTo(3);
        }
    }

    @Test
    void anAddAndGetIsAnsweredFromTheViewOnlyWhenItsWriteIsNewerThanTheViewsRecord() throws Exception {
        try (CounterView view = viewNothingFeeds()) {
            CounterQueries withView = over(view);
            var accurate = catalog.get("ad_clicks").orElseThrow();
            var eventual = catalog.get("video_views").orElseThrow();
            long now = System.currentTimeMillis() * 1000;
            long rolledUp = now - 10_000_000;
            long newest = now - 1_000;
            view.applied("ad_clicks", "c1", new CounterView.Rollup(7, rolledUp, newest, true));
            // newer than every event the live total holds: not in it yet, so folded in
            assertThat(withView.countAfterWriteFromView(accurate, "c1", written(now, 3))
                            .count())
                    .isEqualTo(10);
            // at or before its newest event, or at its rollup: maybe in it already (a retry); the log tells
            assertThat(withView.countAfterWriteFromView(accurate, "c1", written(newest, 3)))
                    .isNull();
            assertThat(withView.countAfterWriteFromView(accurate, "c1", written(newest - 5, 3)))
                    .isNull();
            view.applied("ad_clicks", "c2", new CounterView.Rollup(4, rolledUp, rolledUp - 1, false));
            assertThat(withView.countAfterWriteFromView(accurate, "c2", written(rolledUp, 3)))
                    .isNull();
            assertThat(withView.countAfterWriteFromView(accurate, "c2", written(rolledUp + 1, -1))
                            .count())
                    .isEqualTo(3);
            // a counter the view does not hold: Cassandra answers
            assertThat(withView.countAfterWriteFromView(accurate, "c3", written(now, 3)))
                    .isNull();
            // EVENTUAL: its rollup, as GetCount answers it, the write not in it
            view.applied("video_views", "c1", new CounterView.Rollup(5, rolledUp, rolledUp - 1, false));
            assertThat(withView.countAfterWriteFromView(eventual, "c1", written(now, 3))
                            .count())
                    .isEqualTo(5);
        }
    }

    /** A view whose broker is a port nothing listens on: the test applies its records. */
    static CounterView viewNothingFeeds() {
        return new CounterView(
                io.tally.common.KafkaClientSecurity.PLAINTEXT.client("127.0.0.1:1"), null, 10, name -> 0);
    }

    CounterQueries over(CounterView view) {
        return new CounterQueries(events, cassandra, (type, seconds) -> {}, view);
    }

    static CounterQueries.JustWritten written(long eventTimeMicros, long delta) {
        return new CounterQueries.JustWritten(
                "e-" + eventTimeMicros, new io.tally.namespace.CounterFold.Mutation(eventTimeMicros, false, delta));
    }

    static long count(CounterQueries queries, io.tally.namespace.NamespaceConfig ns, String counter) {
        return queries.getCount(ns, counter).toCompletableFuture().join().count();
    }
}
