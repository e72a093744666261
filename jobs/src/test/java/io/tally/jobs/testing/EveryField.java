package io.tally.jobs.testing;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.util.Random;

/**
 * Sets every public field of an object to a random value other than its type's default, by
 * reflection: a serializer test that round-trips such objects fails for a field added to the class
 * and not to its hand-written serializer (it comes back as the default).
 */
public final class EveryField {
    private EveryField() {}

    /** Fills the fields of the types a serializer of Tally's carries; another type fails the test. */
    public static <T> T fill(T target, Random random) {
        for (Field f : target.getClass().getFields()) {
            if (Modifier.isStatic(f.getModifiers())) {
                continue;
            }
            try {
                Class<?> t = f.getType();
                if (t == String.class) {
                    f.set(target, "s" + random.nextInt(1_000_000));
                } else if (t == long.class) {
                    f.setLong(target, random.nextLong() | 1);
                } else if (t == int.class) {
                    f.setInt(target, random.nextInt() | 1);
                } else if (t == boolean.class) {
                    f.setBoolean(target, true);
                } else if (t == byte[].class) {
                    f.set(target, ("b" + random.nextInt()).getBytes(StandardCharsets.UTF_8));
                } else if (!t.isPrimitive() && t.getPackageName().startsWith("io.tally")) {
                    continue; // a nested object of Tally's: the caller fills it
                } else {
                    throw new AssertionError("a field of a type this helper cannot fill: " + f);
                }
            } catch (IllegalAccessException e) {
                throw new AssertionError(e);
            }
        }
        return target;
    }
}
