package io.tally.gateway.service;

import java.util.concurrent.CompletionException;

/** What failed, under the wrapper a CompletableFuture puts around it. */
public final class Failures {
    private Failures() {}

    /** The cause a CompletionException carries; any other throwable (or null) as it is. */
    public static Throwable unwrap(Throwable err) {
        return err instanceof CompletionException && err.getCause() != null ? err.getCause() : err;
    }
}
