package io.tally.jobs.counter;

import java.util.ArrayList;
import java.util.List;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.state.OperatorStateStore;
import org.apache.flink.api.common.typeinfo.PrimitiveArrayTypeInfo;

/**
 * The counters whose state may have left a task while the store holds their count (let go when
 * idle, or expired): a Bloom filter of their keys. It answers "maybe" for every counter ever added
 * and, for a few others, by chance; never "no" for one added. So a counter without state that it
 * does not name is new and needs no read, and only the rest are read back from the store: a new
 * counter costs no read, a false "maybe" one read that finds nothing.
 *
 * <p>It lives in the operator's union list state: after a restore every task ORs the filters of
 * all tasks of the snapshot, so whichever task a counter's key group moves to on a rescale still
 * names it. Allocated at the first add; an empty filter writes nothing into a checkpoint.
 */
final class LetGoCounters {
    /** 2^23 bits (1 MiB): about 0.1% false "maybe"s at 500,000 counters, 2% at a million. */
    static final int BITS = 1 << 23;

    static final int HASHES = 5;

    private final int bits;
    private long[] words;

    LetGoCounters() {
        this(BITS);
    }

    /** @param bits a power of two (tests use small filters) */
    LetGoCounters(int bits) {
        if (Integer.bitCount(bits) != 1 || bits < 64) {
            throw new IllegalArgumentException("bits must be a power of two of at least 64: " + bits);
        }
        this.bits = bits;
    }

    void add(String key) {
        if (words == null) {
            words = new long[bits / 64];
        }
        for (int bit : bitsOf(key)) {
            words[bit >>> 6] |= 1L << bit;
        }
    }

    /** False only for a counter never added. */
    boolean mightContain(String key) {
        if (words == null) {
            return false;
        }
        for (int bit : bitsOf(key)) {
            if ((words[bit >>> 6] & (1L << bit)) == 0) {
                return false;
            }
        }
        return true;
    }

    /** The key's {@link #HASHES} bits: two halves of one hash, stepped (Kirsch and Mitzenmacher). */
    private int[] bitsOf(String key) {
        long h = hash(key);
        int h1 = (int) h;
        int h2 = (int) (h >>> 32) | 1; // odd: steps through every bit of a power-of-two table
        int[] out = new int[HASHES];
        for (int i = 0; i < HASHES; i++) {
            out[i] = (h1 + i * h2) & (bits - 1);
        }
        return out;
    }

    boolean isEmpty() {
        return words == null;
    }

    /** The share of bits set; a "maybe" for a counter never added comes about this to the fifth. */
    double fill() {
        if (words == null) {
            return 0;
        }
        long set = 0;
        for (long w : words) {
            set += Long.bitCount(w);
        }
        return (double) set / bits;
    }

    /** Adds every counter the other filter names (a filter restored from another task). */
    void addAll(long[] other) {
        if (other.length * 64 != bits) {
            throw new IllegalArgumentException("a filter of " + other.length * 64 + " bits cannot join one of " + bits);
        }
        if (words == null) {
            words = other.clone();
            return;
        }
        for (int i = 0; i < words.length; i++) {
            words[i] |= other[i];
        }
    }

    long[] words() {
        return words;
    }

    /** FNV-1a over the key's chars, then SplitMix64's finalizer: both halves of the result mixed. */
    static long hash(String key) {
        long h = 0xcbf29ce484222325L;
        for (int i = 0; i < key.length(); i++) {
            h ^= key.charAt(i);
            h *= 0x100000001b3L;
        }
        h ^= h >>> 30;
        h *= 0xbf58476d1ce4e5b9L;
        h ^= h >>> 27;
        h *= 0x94d049bb133111ebL;
        return h ^ (h >>> 31);
    }

    /** The filter of one operator, kept in its union list state under `name`. */
    static final class Kept {
        private final ListState<long[]> state;
        final LetGoCounters filter;

        private Kept(ListState<long[]> state, LetGoCounters filter) {
            this.state = state;
            this.filter = filter;
        }

        /** The filter restored (every task's filter of the snapshot, joined), or a new one. */
        static Kept restore(OperatorStateStore store, String name) throws Exception {
            ListState<long[]> state = store.getUnionListState(
                    new ListStateDescriptor<>(name, PrimitiveArrayTypeInfo.LONG_PRIMITIVE_ARRAY_TYPE_INFO));
            LetGoCounters filter = new LetGoCounters();
            for (long[] words : state.get()) {
                filter.addAll(words);
            }
            return new Kept(state, filter);
        }

        /** Writes the filter into the checkpoint being taken. */
        void snapshot() throws Exception {
            List<long[]> now = new ArrayList<>(1);
            if (!filter.isEmpty()) {
                now.add(filter.words());
            }
            state.update(now);
        }
    }
}
