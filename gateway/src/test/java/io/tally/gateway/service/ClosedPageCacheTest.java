package io.tally.gateway.service;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.gateway.service.TimeSeriesQueries.Event;
import io.tally.gateway.service.TimeSeriesQueries.EventPage;
import io.tally.namespace.NamespaceConfig;
import io.tally.namespace.NamespaceConfigParser;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class ClosedPageCacheTest {
    static final NamespaceConfig PLAYBACK = NamespaceConfigParser.parse("playback", "{\"kind\":\"timeseries\"}");
    final AtomicLong now = new AtomicLong(1_000_000);

    static ClosedPageCache.Key key(NamespaceConfig ns, String tsid, String token) {
        return new ClosedPageCache.Key(ns, tsid, 7, token, 100, 1000, 1 << 20);
    }

    static EventPage page(int events, int valueBytes) {
        List<Event> list = new java.util.ArrayList<>();
        for (int i = 0; i < events; i++) {
            list.add(new Event(i, "e" + i, List.of(Map.entry("k", new byte[valueBytes]))));
        }
        return new EventPage(list, null);
    }

    @Test
    void aPageIsServedUntilItsSliceMayBeDroppedOrItsTimeToLivePassed() {
        var cache = new ClosedPageCache(1 << 20, 60_000, now::get);
        var page = page(3, 10);
        cache.put(key(PLAYBACK, "a", null), page, now.get() + 10_000);
        assertThat(cache.get(key(PLAYBACK, "a", null))).isSameAs(page);
        now.addAndGet(10_000); // retention may drop the oldest slice the page covers
        assertThat(cache.get(key(PLAYBACK, "a", null))).isNull();
        assertThat(cache.bytes()).isZero();

        cache.put(key(PLAYBACK, "b", null), page, Long.MAX_VALUE);
        now.addAndGet(59_999);
        assertThat(cache.get(key(PLAYBACK, "b", null))).isSameAs(page);
        now.addAndGet(1);
        assertThat(cache.get(key(PLAYBACK, "b", null))).isNull();
    }

    @Test
    void anotherConfigOfTheNamespaceOrAnotherPositionIsAnotherPage() {
        var cache = new ClosedPageCache(1 << 20, 60_000, now::get);
        cache.put(key(PLAYBACK, "a", null), page(1, 1), Long.MAX_VALUE);
        NamespaceConfig wider =
                NamespaceConfigParser.parse("playback", "{\"kind\":\"timeseries\",\"accept_limit\":\"1h\"}");
        assertThat(cache.get(key(wider, "a", null))).isNull();
        assertThat(cache.get(key(PLAYBACK, "a", "token"))).isNull();
        assertThat(cache.get(key(PLAYBACK, "b", null))).isNull();
        assertThat(cache.get(key(PLAYBACK, "a", null))).isNotNull();
    }

    @Test
    void theLeastRecentlyUsedPagesGoOnceTheBudgetIsFull() {
        long one = ClosedPageCache.sizeOf(key(PLAYBACK, "a", null), page(10, 100));
        var cache = new ClosedPageCache(3 * one, 60_000, now::get);
        for (String id : List.of("a", "b", "c")) {
            cache.put(key(PLAYBACK, id, null), page(10, 100), Long.MAX_VALUE);
        }
        assertThat(cache.get(key(PLAYBACK, "a", null))).isNotNull(); // "a" used: "b" is now the eldest
        cache.put(key(PLAYBACK, "d", null), page(10, 100), Long.MAX_VALUE);
        assertThat(cache.get(key(PLAYBACK, "b", null))).isNull();
        assertThat(cache.get(key(PLAYBACK, "a", null))).isNotNull();
        assertThat(cache.size()).isEqualTo(3);
        assertThat(cache.bytes()).isEqualTo(3 * one);
        cache.put(key(PLAYBACK, "huge", null), page(1000, 1000), Long.MAX_VALUE); // larger than the budget
        assertThat(cache.get(key(PLAYBACK, "huge", null))).isNull();
        assertThat(cache.size()).isEqualTo(3);
    }

    @Test
    void anAnswerRememberedWithAPageIsServedWithItCountedAndGoesWithIt() {
        long one = ClosedPageCache.sizeOf(key(PLAYBACK, "a", null), page(10, 100));
        var cache = new ClosedPageCache(3 * one, 60_000, now::get);
        var page = page(10, 100);
        cache.put(key(PLAYBACK, "a", null), page, Long.MAX_VALUE);
        var kept = cache.kept(key(PLAYBACK, "a", null));
        assertThat(kept.page()).isSameAs(page);
        assertThat(kept.answer()).isNull();
        byte[] answer = new byte[500];
        kept.remember(answer);
        assertThat(cache.kept(key(PLAYBACK, "a", null)).answer()).isSameAs(answer);
        assertThat(cache.bytes()).isEqualTo(one + 500);
        kept.remember(new byte[7]); // answered already: the first answer stays
        assertThat(cache.kept(key(PLAYBACK, "a", null)).answer()).isSameAs(answer);
        assertThat(cache.bytes()).isEqualTo(one + 500);

        // a page put again under the key does not take the answer made of the one it replaced
        var replaced = cache.kept(key(PLAYBACK, "a", null));
        var again = page(10, 100);
        cache.put(key(PLAYBACK, "a", null), again, Long.MAX_VALUE);
        assertThat(cache.kept(key(PLAYBACK, "a", null)).answer()).isNull();
        assertThat(cache.bytes()).isEqualTo(one);
        replaced.remember(new byte[9]);
        assertThat(cache.kept(key(PLAYBACK, "a", null)).answer()).isNull();

        // answers count in the budget: the eldest page goes when one no longer fits
        cache.put(key(PLAYBACK, "b", null), page(10, 100), Long.MAX_VALUE);
        cache.put(key(PLAYBACK, "c", null), page(10, 100), Long.MAX_VALUE);
        cache.kept(key(PLAYBACK, "c", null)).remember(new byte[10]);
        assertThat(cache.get(key(PLAYBACK, "a", null))).isNull();
        assertThat(cache.size()).isEqualTo(2);
        assertThat(cache.bytes()).isEqualTo(2 * one + 10);
        // an answer that would not fit the budget beside its page is not kept
        cache.kept(key(PLAYBACK, "b", null)).remember(new byte[(int) (3 * one)]);
        assertThat(cache.kept(key(PLAYBACK, "b", null)).answer()).isNull();
        // an expired page takes no answer
        var b = cache.kept(key(PLAYBACK, "b", null));
        now.addAndGet(60_000);
        b.remember(new byte[1]);
        assertThat(cache.bytes()).isEqualTo(2 * one + 10);
        assertThat(cache.kept(key(PLAYBACK, "b", null))).isNull();
    }

    @Test
    void aCacheWithoutBudgetKeepsNothing() {
        var cache = new ClosedPageCache(0, 60_000, now::get);
        assertThat(cache.enabled()).isFalse();
        cache.put(key(PLAYBACK, "a", null), page(1, 1), Long.MAX_VALUE);
        assertThat(cache.get(key(PLAYBACK, "a", null))).isNull();
    }
}
