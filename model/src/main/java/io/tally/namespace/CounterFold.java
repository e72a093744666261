package io.tally.namespace;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * The one definition of a counter's value, used by the rollup job, the gateway's ACCURATE
 * reads and the recount: mutations applied in event-time order, where CLEAR at T drops every
 * event at or before T (so at one instant a CLEAR comes after the ADDs). The result does not
 * depend on the order the mutations arrived in.
 *
 * <p>A counter mutation is stored in its namespace's event table as one item: key
 * {@code ADD} or {@code CLEAR}, value the delta as decimal ASCII (readable in ReadEventRecords).
 */
public final class CounterFold {
    public static final String ADD = "ADD";
    public static final String CLEAR = "CLEAR";

    private CounterFold() {}

    public record Mutation(long eventTimeMicros, boolean clear, long delta) {}

    private static final Comparator<Mutation> EVENT_TIME_ORDER =
            Comparator.comparingLong(Mutation::eventTimeMicros).thenComparing(Mutation::clear);

    /** The count after applying the mutations, in event-time order, to a starting count. */
    public static long fold(long start, List<Mutation> mutations) {
        List<Mutation> sorted = new ArrayList<>(mutations);
        sorted.sort(EVENT_TIME_ORDER);
        long count = start;
        for (Mutation m : sorted) {
            count = m.clear() ? 0 : add(count, m.delta());
        }
        return count;
    }

    /**
     * a + b, saturating at Long.MIN_VALUE and Long.MAX_VALUE: a counter at its bound stays there
     * instead of wrapping to the other sign (MAX + MAX was -2).
     */
    public static long add(long a, long b) {
        long r = a + b;
        if (((a ^ r) & (b ^ r)) < 0) { // both operands' sign differs from the result's: overflow
            return a < 0 ? Long.MIN_VALUE : Long.MAX_VALUE;
        }
        return r;
    }

    /** a - b, saturating like {@link #add} (what a recount corrects a count by). */
    public static long difference(long a, long b) {
        long r = a - b;
        if (((a ^ b) & (a ^ r)) < 0) { // operands of different signs and the result's sign is not a's
            return a < 0 ? Long.MIN_VALUE : Long.MAX_VALUE;
        }
        return r;
    }

    /** The stored item value of a mutation. */
    public static byte[] itemValue(long delta) {
        return Long.toString(delta).getBytes(StandardCharsets.UTF_8);
    }

    /** A stored item back as a mutation; null when the item is not a counter mutation. */
    public static Mutation fromItem(long eventTimeMicros, String itemKey, byte[] value) {
        boolean clear = CLEAR.equals(itemKey);
        if (!clear && !ADD.equals(itemKey)) {
            return null;
        }
        try {
            return new Mutation(eventTimeMicros, clear, Long.parseLong(new String(value, StandardCharsets.UTF_8)));
        } catch (NumberFormatException e) {
            return null;
        }
    }
}
