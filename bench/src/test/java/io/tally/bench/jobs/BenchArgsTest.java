package io.tally.bench.jobs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;

class BenchArgsTest {
    static final Map<String, String> DEFAULTS = Map.of("bootstrap", "127.0.0.1:9092", "events", "10");

    @Test
    void theCommandMayStandAnywhereAmongTheOptions() {
        // the counters benchmark is called as: --bootstrap B ... produce --events N
        BenchArgs a = BenchArgs.parse(new String[] {"--bootstrap", "h:19092", "produce", "--events", "5"}, DEFAULTS);
        assertThat(a.command()).isEqualTo("produce");
        assertThat(a.options()).containsEntry("bootstrap", "h:19092").containsEntry("events", "5");
        assertThat(BenchArgs.parse(new String[] {"produce"}, DEFAULTS).options())
                .isEqualTo(DEFAULTS);
    }

    @Test
    void anUnknownOptionOrAMissingValueIsAnError() {
        assertThatThrownBy(() -> BenchArgs.parse(new String[] {"produce", "--evnets", "5"}, DEFAULTS))
                .hasMessageContaining("--evnets");
        assertThatThrownBy(() -> BenchArgs.parse(new String[] {"produce", "--events"}, DEFAULTS))
                .hasMessageContaining("missing value");
        assertThatThrownBy(() -> BenchArgs.parse(new String[] {"produce", "again"}, DEFAULTS))
                .hasMessageContaining("second command");
    }
}
