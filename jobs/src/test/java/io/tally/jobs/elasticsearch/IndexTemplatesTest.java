package io.tally.jobs.elasticsearch;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.namespace.NamespaceConfigParser;
import org.junit.jupiter.api.Test;

class IndexTemplatesTest {
    @Test
    void theTemplateMapsTheNamespaceFieldsAndAlias() {
        var ns = NamespaceConfigParser.parse(
                "playback",
                "{\"kind\":\"timeseries\",\"index\":{\"field_mapping\":"
                        + "{\"deviceType\":\"KEYWORD\",\"duration\":\"INTEGER\"},\"refresh_interval\":\"1s\"}}");
        String t = IndexTemplates.template(ns);
        assertThat(t)
                .contains("\"index_patterns\":[\"tally-playback-*\"]")
                .contains("\"deviceType\":{\"type\":\"keyword\"}")
                .contains("\"duration\":{\"type\":\"integer\"}")
                .contains("\"aliases\":{\"tally-playback\":{}}")
                .doesNotContain("refresh_interval");
        assertThat(IndexTemplates.refreshSetting(ns)).isEqualTo("null");
    }

    @Test
    void anIntervalOtherThanElasticsearchsDefaultIsSetAsAsked() {
        var ns = NamespaceConfigParser.parse(
                "playback", "{\"kind\":\"timeseries\",\"index\":{\"refresh_interval\":\"5s\"}}");
        assertThat(IndexTemplates.template(ns)).contains("\"refresh_interval\":\"5000ms\"");
        assertThat(IndexTemplates.refreshSetting(ns)).isEqualTo("\"5000ms\"");
    }
}
