package io.tally.model;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

class TopicsTest {
    @Test
    void topicsJsonIsWhatTheClassSays() throws Exception {
        // The launcher creates topics from model/topics.json and the Go exporter checks its
        // constants against it: regenerate with `java -cp model/target/classes io.tally.model.Topics >
        // model/topics.json`.
        assertThat(Files.readString(Path.of("topics.json"))).isEqualTo(Topics.json());
    }

    @Test
    void everyTopicWithAValueSchemaHasOneOfTallysSchemas() {
        Topics.ALL.stream().filter(t -> t.valueSchema() != null).forEach(t -> assertThat(TallySchemas.ALL)
                .containsKey(t.valueSchema()));
        assertThat(TallySchemas.TOPIC_VALUES)
                .containsOnlyKeys(
                        Topics.COUNTER_EVENTS,
                        Topics.TIMESERIES_EVENTS,
                        Topics.DEAD_LETTER,
                        Topics.COUNTER_ROLLUPS,
                        Topics.ALERTS);
    }

    @Test
    void counterEventsCarryTheBrokersAppendTime() {
        // the rollup's immutable window relies on timestamps that only grow within a partition
        assertThat(Topics.ALL.get(0).name()).isEqualTo(Topics.COUNTER_EVENTS);
        assertThat(Topics.ALL.get(0).config()).containsEntry("message.timestamp.type", "LogAppendTime");
    }
}
