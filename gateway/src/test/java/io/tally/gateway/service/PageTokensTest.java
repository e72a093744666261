package io.tally.gateway.service;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

/** Page tokens: a cursor comes back as it went out, and only from this service and this query. */
class PageTokensTest {
    final PageTokens tokens = new PageTokens("test-secret");
    final PageTokens.Cursor cursor = new PageTokens.Cursor(1_700_000_000_123_456L, "ev-ü-1", 300);

    @Test
    void aTokenDecodesToItsCursor() {
        assertThat(tokens.decode(tokens.encode(cursor, 42), 42)).isEqualTo(cursor);
    }

    @Test
    void aTokenOfAnotherQueryIsRefused() {
        String token = tokens.encode(cursor, 42);
        assertThatThrownBy(() -> tokens.decode(token, 43))
                .isInstanceOfSatisfying(
                        ServiceException.class, e -> assertThat(e.errorCode()).isEqualTo(ErrorCode.INVALID_PAGE_TOKEN))
                .hasMessageContaining("another query");
    }

    @Test
    void anAlteredTokenOrOneSignedWithAnotherSecretIsRefused() {
        String token = tokens.encode(cursor, 42);
        char last = token.charAt(token.length() - 1);
        String altered = token.substring(0, token.length() - 1) + (last == 'A' ? 'B' : 'A');
        String foreign = new PageTokens("other-secret").encode(cursor, 42);
        for (String bad : List.of(altered, foreign, "no-dot", "%%%.%%%", "")) {
            assertThatThrownBy(() -> tokens.decode(bad, 42))
                    .isInstanceOfSatisfying(ServiceException.class, e -> assertThat(e.errorCode())
                            .isEqualTo(ErrorCode.INVALID_PAGE_TOKEN))
                    .hasMessageContaining("not one this service issued");
        }
    }

    @Test
    void tokensMadeAndCheckedOnManyThreadsAtOnceAgree() throws Exception {
        // each thread keeps its own keyed Mac: none may see another's half-computed digest
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try {
            List<Future<Integer>> runs = new ArrayList<>();
            for (int t = 0; t < 8; t++) {
                int thread = t;
                runs.add(pool.submit(() -> {
                    int ok = 0;
                    for (int i = 0; i < 2_000; i++) {
                        var c = new PageTokens.Cursor(i, "e" + thread + "-" + i, i);
                        ok += tokens.decode(tokens.encode(c, thread), thread).equals(c) ? 1 : 0;
                    }
                    return ok;
                }));
            }
            for (Future<Integer> run : runs) {
                assertThat(run.get()).isEqualTo(2_000);
            }
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void anUnsetSecretSignsWithARandomKeyOfItsOwn() {
        PageTokens a = new PageTokens(null);
        PageTokens b = new PageTokens("");
        assertThat(a.decode(a.encode(cursor, 1), 1)).isEqualTo(cursor);
        assertThatThrownBy(() -> b.decode(a.encode(cursor, 1), 1)).isInstanceOf(ServiceException.class);
    }
}
