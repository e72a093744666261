package io.tally.jobs.timeseries;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.namespace.NamespaceConfig.FieldType;
import org.junit.jupiter.api.Test;

class IndexDocsTest {
    @Test
    void itemTextIsConvertedToTheMappedType() {
        assertThat(io.tally.namespace.FieldValues.convert(FieldType.INTEGER, "42"))
                .isEqualTo(42L);
        assertThat(io.tally.namespace.FieldValues.convert(FieldType.INTEGER, "forty-two"))
                .isNull();
        assertThat(io.tally.namespace.FieldValues.convert(FieldType.DOUBLE, "1.5"))
                .isEqualTo(1.5);
        assertThat(io.tally.namespace.FieldValues.convert(FieldType.BOOLEAN, "TRUE"))
                .isEqualTo(true);
        assertThat(io.tally.namespace.FieldValues.convert(FieldType.BOOLEAN, "maybe"))
                .isNull();
        assertThat(io.tally.namespace.FieldValues.convert(FieldType.KEYWORD, "ios"))
                .isEqualTo("ios");
    }
}
