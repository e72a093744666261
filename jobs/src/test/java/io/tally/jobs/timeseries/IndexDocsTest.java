package io.tally.jobs.timeseries;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.namespace.NamespaceConfig.FieldType;
import io.tally.namespace.NamespaceConfigParser;
import org.junit.jupiter.api.Test;

class IndexDocsTest {
    @Test
    void itemTextIsConvertedToTheMappedType() {
        assertThat(io.tally.namespace.FieldValues.convert(FieldType.INTEGER, "42")).isEqualTo(42L);
        assertThat(io.tally.namespace.FieldValues.convert(FieldType.INTEGER, "forty-two")).isNull();
        assertThat(io.tally.namespace.FieldValues.convert(FieldType.DOUBLE, "1.5")).isEqualTo(1.5);
        assertThat(io.tally.namespace.FieldValues.convert(FieldType.BOOLEAN, "TRUE")).isEqualTo(true);
        assertThat(io.tally.namespace.FieldValues.convert(FieldType.BOOLEAN, "maybe")).isNull();
        assertThat(io.tally.namespace.FieldValues.convert(FieldType.KEYWORD, "ios")).isEqualTo("ios");
    }

    @Test
    void theTemplateMapsTheNamespaceFieldsAndAlias() {
        var ns = NamespaceConfigParser.parse("playback", "{\"kind\":\"timeseries\",\"index\":{\"field_mapping\":"
                + "{\"deviceType\":\"KEYWORD\",\"duration\":\"INTEGER\"},\"refresh_interval\":\"1s\"}}");
        String t = IndexDocs.template(ns);
        assertThat(t).contains("\"index_patterns\":[\"tally-playback-*\"]")
                .contains("\"deviceType\":{\"type\":\"keyword\"}").contains("\"duration\":{\"type\":\"integer\"}")
                .contains("\"aliases\":{\"tally-playback\":{}}").contains("\"refresh_interval\":\"1000ms\"");
    }
}
