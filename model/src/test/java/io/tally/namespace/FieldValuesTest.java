package io.tally.namespace;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.namespace.NamespaceConfig.FieldType;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** What Elasticsearch stores as each mapped type, and what it refuses (so the gateway refuses it first). */
class FieldValuesTest {
    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {
                "INTEGER|2147483647",
                "INTEGER|-2147483648",
                "INTEGER| 42 ",
                "LONG|9223372036854775807",
                "DOUBLE|1.5e3",
                "DOUBLE|-0.25",
                "BOOLEAN|TRUE",
                "DATE|2026-11-23",
                "DATE|2026-11-23T10:15:30Z",
                "DATE|2026-11-23T10:15:30.123+01:00",
                "DATE|1700000000000",
                "KEYWORD|anything",
                "TEXT|anything at all"
            })
    void valuesOfTheType(FieldType type, String text) {
        assertThat(FieldValues.whyNot(type, text)).isNull();
        assertThat(FieldValues.convert(type, text)).isNotNull();
    }

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {
                "INTEGER|3000000000",
                "INTEGER|-2147483649",
                "INTEGER|1.5",
                "LONG|9223372036854775808",
                "DOUBLE|NaN",
                "DOUBLE|Infinity",
                "DOUBLE|-Infinity",
                "DOUBLE|1e999",
                "DOUBLE|0x1p3",
                "DOUBLE|1d",
                "BOOLEAN|yes",
                "DATE|23/11/2026",
                "DATE|tomorrow"
            })
    void valuesElasticsearchWouldRefuse(FieldType type, String text) {
        assertThat(FieldValues.whyNot(type, text)).isNotNull();
        assertThat(FieldValues.convert(type, text)).isNull();
    }

    @org.junit.jupiter.api.Test
    void aKeywordIsBoundedByLucenesTermLimitInBytes() {
        assertThat(FieldValues.whyNot(FieldType.KEYWORD, "a".repeat(FieldValues.MAX_KEYWORD_BYTES)))
                .isNull();
        assertThat(FieldValues.whyNot(FieldType.KEYWORD, "é".repeat(FieldValues.MAX_KEYWORD_BYTES / 2 + 1)))
                .contains("32766");
    }
}
