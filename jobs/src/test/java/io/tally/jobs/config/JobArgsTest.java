package io.tally.jobs.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tally.jobs.counter.CounterRollupJob;
import io.tally.jobs.sched.NoisyNeighborJob;
import io.tally.jobs.timeseries.TimeSeriesWriterJob;
import java.util.List;
import org.junit.jupiter.api.Test;

class JobArgsTest {
    @Test
    void defaultsApplyAndBothFlagFormsParse() {
        JobArgs a = JobArgs.parse(TimeSeriesWriterJob.NAME, TimeSeriesWriterJob.SETTINGS, new String[] {
            "--kafka.bootstrap", "10.0.0.1:9092", "--cassandra.port=9142"
        });
        assertThat(a.text(JobSettings.KAFKA_BOOTSTRAP)).isEqualTo("10.0.0.1:9092");
        assertThat(a.port(JobSettings.CASSANDRA_PORT)).isEqualTo(9142);
        assertThat(a.number(TimeSeriesWriterJob.LIFECYCLE_INTERVAL_MS)).isEqualTo(60_000);
        assertThat(a.text(JobSettings.groupId(TimeSeriesWriterJob.NAME))).isEqualTo("tally-timeseries-writer");
    }

    @Test
    void everyJobTakesItsStateBackendHeapByDefault() {
        for (var job : List.of(TimeSeriesWriterJob.SETTINGS, CounterRollupJob.SETTINGS, NoisyNeighborJob.SETTINGS)) {
            assertThat(JobArgs.parse("j", job, new String[0]).text(JobSettings.STATE_BACKEND))
                    .isEqualTo("hashmap");
            assertThat(JobArgs.parse("j", job, new String[] {"--state.backend", "rocksdb"})
                            .text(JobSettings.STATE_BACKEND))
                    .isEqualTo("rocksdb");
        }
        assertThatThrownBy(() -> JobArgs.parse(
                        CounterRollupJob.NAME, CounterRollupJob.SETTINGS, new String[] {"--state.backend", "memory"}))
                .hasMessageContaining("--state.backend memory: must be hashmap or rocksdb");
    }

    @Test
    void anUnknownArgumentIsAnErrorNamingIt() {
        // the launcher once passed Elasticsearch settings to every job, and they were ignored
        assertThatThrownBy(() -> JobArgs.parse(CounterRollupJob.NAME, CounterRollupJob.SETTINGS, new String[] {
                    "--elasticsearch.url", "http://127.0.0.1:9200"
                }))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("unknown argument --elasticsearch.url")
                .hasMessageContaining("--heartbeat.interval.ms");
        assertThatThrownBy(() -> JobArgs.parse("j", List.of(), new String[] {"stray"}))
                .hasMessageContaining("unexpected argument 'stray'");
        assertThatThrownBy(() -> JobArgs.parse(
                        CounterRollupJob.NAME, CounterRollupJob.SETTINGS, new String[] {"--cassandra.port"}))
                .hasMessageContaining("--cassandra.port needs a value");
    }

    @Test
    void valuesAreCheckedByKind() {
        List<JobSetting> s = NoisyNeighborJob.SETTINGS;
        assertThatThrownBy(() -> JobArgs.parse("j", s, new String[] {"--window.size.ms", "-5"}))
                .hasMessageContaining("--window.size.ms -5: must be within 1..");
        // the Elasticsearch sink takes its bulk bounds as ints above 0: refused here, by name
        assertThatThrownBy(() ->
                        JobArgs.parse("j", TimeSeriesWriterJob.SETTINGS, new String[] {"--elasticsearch.bulk.mb", "0"}))
                .hasMessageContaining("--elasticsearch.bulk.mb 0: must be within 1..2147483647");
        assertThatThrownBy(() -> JobArgs.parse(
                        "j", TimeSeriesWriterJob.SETTINGS, new String[] {"--elasticsearch.bulk.actions", "3000000000"}))
                .hasMessageContaining("must be within 1..2147483647");
        assertThatThrownBy(() -> JobArgs.parse("j", s, new String[] {"--rule.ratio", "NaN"}))
                .hasMessageContaining("--rule.ratio NaN: must be a number above 0");
        assertThatThrownBy(() -> JobArgs.parse("j", s, new String[] {"--kafka.bootstrap", "nohost"}))
                .hasMessageContaining("must be host:port");
        assertThatThrownBy(() -> JobArgs.parse("j", s, new String[] {"--registry.url", "ftp://x"}))
                .hasMessageContaining("must be an http(s) URL");
        assertThatThrownBy(
                        () -> JobArgs.parse("j", CounterRollupJob.SETTINGS, new String[] {"--cassandra.port", "70000"}))
                .hasMessageContaining("outside 1..65535");
    }

    @Test
    void helpListsEverySettingWithItsDefault() {
        JobArgs a = JobArgs.parse(NoisyNeighborJob.NAME, NoisyNeighborJob.SETTINGS, new String[] {"--help"});
        assertThat(a.helpAsked()).isTrue();
        NoisyNeighborJob.SETTINGS.forEach(
                s -> assertThat(a.usage()).contains("--" + s.name()).contains(s.defaultValue()));
    }
}
