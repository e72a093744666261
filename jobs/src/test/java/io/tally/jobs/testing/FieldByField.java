package io.tally.jobs.testing;

import static org.assertj.core.api.Assertions.assertThat;

import org.apache.flink.testutils.DeeplyEqualsChecker;

/**
 * Equality for {@code SerializerTestBase} of a class without an equals of its own (nothing else
 * compares its objects): field by field, recursively.
 */
public final class FieldByField {
    private FieldByField() {}

    public static DeeplyEqualsChecker checker(Class<?> type) {
        return new DeeplyEqualsChecker()
                .withCustomCheck((a, b) -> type.isInstance(a) && type.isInstance(b), (a, b, c) -> same(a, b));
    }

    private static boolean same(Object a, Object b) {
        try {
            assertThat(b).usingRecursiveComparison().isEqualTo(a);
            return true;
        } catch (AssertionError e) {
            return false;
        }
    }
}
