package io.tally.model;

import static org.assertj.core.api.Assertions.assertThat;

import org.apache.avro.Schema;
import org.junit.jupiter.api.Test;

class TallySchemasTest {
    @Test
    void everySchemaIsInTheTallyNamespace() {
        assertThat(TallySchemas.ALL).hasSize(7);
        TallySchemas.ALL.values().forEach(s -> assertThat(s.getNamespace()).isEqualTo("tally.v1"));
    }

    @Test
    void schemasAreSelfContainedSoTheRegistryNeedsNoReferences() {
        Schema reparsed = new Schema.Parser().parse(TallySchemas.TIME_SERIES_EVENT.toString());
        assertThat(reparsed).isEqualTo(TallySchemas.TIME_SERIES_EVENT);
        assertThat(reparsed.getField("items").schema().getElementType().getField("value"))
                .isNotNull();
    }

    @Test
    void timesAreMicrosecondTimestamps() {
        assertThat(TallySchemas.COUNTER_EVENT
                        .getField("event_time")
                        .schema()
                        .getLogicalType()
                        .getName())
                .isEqualTo("timestamp-micros");
        assertThat(TallySchemas.IDEMPOTENCY_TOKEN
                        .getField("generation_time")
                        .schema()
                        .getLogicalType()
                        .getName())
                .isEqualTo("timestamp-micros");
    }
}
