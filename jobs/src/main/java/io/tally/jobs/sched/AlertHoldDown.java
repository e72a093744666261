package io.tally.jobs.sched;

import java.io.Serializable;
import java.time.Duration;

/**
 * How long a container's windows must keep saying the same before its alert changes state, as
 * Prometheus's {@code for} and {@code keep_firing_for} do: FIRING once the noisy-neighbor verdict
 * has held for {@code forFiring} (measured between window ends), RESOLVED once it has been absent
 * for {@code keepFiringFor}. Without it, a stack whose servers are each other's neighbors flapped:
 * 629 FIRING/RESOLVED in an hour of the test suite, some two seconds apart.
 */
public record AlertHoldDown(Duration forFiring, Duration keepFiringFor) implements Serializable {
    public AlertHoldDown {
        if (forFiring.isNegative() || keepFiringFor.isNegative()) {
            throw new IllegalArgumentException("an alert's hold-down cannot be negative");
        }
    }

    /** No hold-down: every window's verdict changes the state at once. */
    public static final AlertHoldDown NONE = new AlertHoldDown(Duration.ZERO, Duration.ZERO);

    /** Whether a verdict that has differed from the state since {@code sinceMillis} changes it at {@code nowMillis}. */
    boolean held(boolean toFiring, long sinceMillis, long nowMillis) {
        return nowMillis - sinceMillis >= (toFiring ? forFiring : keepFiringFor).toMillis();
    }
}
