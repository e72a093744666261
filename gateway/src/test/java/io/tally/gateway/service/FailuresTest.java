package io.tally.gateway.service;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.Test;

class FailuresTest {
    @Test
    void aCompletionExceptionGivesItsCauseAndAnythingElseIsItself() {
        IllegalStateException cause = new IllegalStateException("down");
        assertThat(Failures.unwrap(new CompletionException(cause))).isSameAs(cause);
        CompletionException bare = new CompletionException("no cause", null);
        assertThat(Failures.unwrap(bare)).isSameAs(bare);
        assertThat(Failures.unwrap(cause)).isSameAs(cause);
        assertThat(Failures.unwrap(null)).isNull();
    }
}
