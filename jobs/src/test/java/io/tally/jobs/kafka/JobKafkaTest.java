package io.tally.jobs.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tally.jobs.config.JobArgs;
import io.tally.jobs.counter.CounterRollupJob;
import io.tally.jobs.sched.NoisyNeighborJob;
import io.tally.jobs.timeseries.TimeSeriesWriterJob;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Properties;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class JobKafkaTest {
    @TempDir
    Path dir;

    @Test
    void withoutSecurityArgumentsEveryClientIsPlaintext() {
        JobKafka kafka = new JobKafka(
                JobArgs.parse(CounterRollupJob.NAME, CounterRollupJob.SETTINGS, new String[0]), CounterRollupJob.NAME);
        assertThat(kafka.clientConfig()).containsOnlyKeys("security.protocol");
        assertThat(kafka.producerConfig())
                .containsEntry("security.protocol", "PLAINTEXT")
                .containsKey("linger.ms");
    }

    @Test
    void everyJobTakesScramOverTlsWithThePasswordFromAFile() throws IOException {
        Path password = Files.writeString(dir.resolve("kafka.password"), "s3cret\n");
        Path ca = Files.writeString(dir.resolve("ca.pem"), "-----BEGIN CERTIFICATE-----\n");
        String[] args = {
            "--kafka.security.protocol",
            "SASL_SSL",
            "--kafka.sasl.username",
            "tally",
            "--kafka.sasl.password.file",
            password.toString(),
            "--kafka.ssl.truststore",
            ca.toString()
        };
        for (var job : List.of(TimeSeriesWriterJob.SETTINGS, CounterRollupJob.SETTINGS, NoisyNeighborJob.SETTINGS)) {
            Properties producer = new JobKafka(JobArgs.parse("j", job, args), "j").producerConfig();
            assertThat(producer)
                    .containsEntry("security.protocol", "SASL_SSL")
                    .containsEntry("sasl.mechanism", "SCRAM-SHA-512")
                    .containsEntry("ssl.truststore.location", ca.toString());
            // the password file is named, and each client reads it where it runs: no password in the job graph
            assertThat((String) producer.get("sasl.jaas.config"))
                    .contains("username=\"tally\"", "password=\"${tally-password:" + password + ":password}\"")
                    .doesNotContain("s3cret");
            assertThat(producer).containsEntry("config.providers", "tally-password");
        }
    }

    @Test
    void aPasswordIsNeverAJobArgument() {
        // a job's arguments show in Flink's REST API and dashboard: only a file may hold the password
        assertThatThrownBy(() -> JobArgs.parse(
                        CounterRollupJob.NAME, CounterRollupJob.SETTINGS, new String[] {"--kafka.sasl.password", "x"}))
                .hasMessageContaining("unknown argument --kafka.sasl.password");
        JobArgs noPassword = JobArgs.parse(CounterRollupJob.NAME, CounterRollupJob.SETTINGS, new String[] {
            "--kafka.security.protocol", "SASL_SSL", "--kafka.sasl.username", "tally"
        });
        assertThatThrownBy(() -> new JobKafka(noPassword, CounterRollupJob.NAME))
                .hasMessageContaining("kafka.sasl.password.file");
    }

    @Test
    void theProviderReadsThePasswordFilesFirstLineWhereTheClientStarts() throws IOException {
        Path password = Files.writeString(dir.resolve("kafka.password"), "s3cret\nrest\n");
        PasswordFileConfigProvider provider = new PasswordFileConfigProvider();
        assertThat(provider.get(password.toString(), java.util.Set.of("password"))
                        .data())
                .containsEntry("password", "s3cret");
        // as a Kafka client resolves it: the reference in a JAAS option, the provider declared
        java.util.Map<String, Object> props = new java.util.HashMap<>(PasswordFileConfigProvider.declared());
        props.put("bootstrap.servers", "127.0.0.1:1");
        props.put(
                "sasl.jaas.config",
                "x required password=\"" + PasswordFileConfigProvider.reference(password.toString()) + "\";");
        org.apache.kafka.clients.admin.AdminClientConfig resolved =
                new org.apache.kafka.clients.admin.AdminClientConfig(props);
        assertThat(resolved.getPassword("sasl.jaas.config").value()).isEqualTo("x required password=\"s3cret\";");
        assertThatThrownBy(() -> provider.get(dir.resolve("missing").toString(), java.util.Set.of("password")))
                .hasMessageContaining("cannot be read");
    }
}
