package io.tally.common;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class KafkaClientSecurityTest {
    @TempDir
    Path dir;

    private static KafkaClientSecurity of(Map<String, String> env) {
        return KafkaClientSecurity.from(ServiceSettings.from(KafkaClientSecurity.FIELDS, env, new String[0]));
    }

    @Test
    void byDefaultPlaintextWithNothingElse() {
        KafkaClientSecurity s = of(Map.of());
        assertThat(s.secured()).isFalse();
        assertThat(s.properties()).containsExactly(Map.entry("security.protocol", "PLAINTEXT"));
    }

    @Test
    void scramOverTlsGivesTheJaasLoginAndTheTrustStore() throws IOException {
        Path ca = Files.writeString(dir.resolve("ca.pem"), "-----BEGIN CERTIFICATE-----\n");
        KafkaClientSecurity s = of(Map.of(
                "TALLY_KAFKA_SECURITY_PROTOCOL", "sasl_ssl",
                "TALLY_KAFKA_SASL_USERNAME", "tally",
                "TALLY_KAFKA_SASL_PASSWORD", "pa\"ss\\word",
                "TALLY_KAFKA_SSL_TRUSTSTORE", ca.toString()));
        Map<String, String> p = s.properties();
        assertThat(p)
                .containsEntry("security.protocol", "SASL_SSL")
                .containsEntry("sasl.mechanism", "SCRAM-SHA-512")
                .containsEntry(
                        "sasl.jaas.config",
                        "org.apache.kafka.common.security.scram.ScramLoginModule required username=\"tally\""
                                + " password=\"pa\\\"ss\\\\word\";")
                .containsEntry("ssl.truststore.location", ca.toString())
                .containsEntry("ssl.truststore.type", "PEM")
                .containsEntry("ssl.endpoint.identification.algorithm", "https")
                .doesNotContainKey("ssl.truststore.password");
        assertThat(s.toString()).contains("SASL_SSL", "tally", ca.toString()).doesNotContain("word");
    }

    @Test
    void thePasswordFileWinsAndItsFirstLineIsThePassword() throws IOException {
        Path file = Files.writeString(dir.resolve("kafka.password"), "from-file\n");
        Map<String, String> env = new HashMap<>(Map.of(
                "TALLY_KAFKA_SECURITY_PROTOCOL", "SASL_PLAINTEXT",
                "TALLY_KAFKA_SASL_MECHANISM", "SCRAM-SHA-256",
                "TALLY_KAFKA_SASL_USERNAME", "u",
                "TALLY_KAFKA_SASL_PASSWORD", "from-env",
                "TALLY_KAFKA_SASL_PASSWORD_FILE", file.toString()));
        Map<String, String> p = of(env).properties();
        assertThat(p.get("sasl.jaas.config")).contains("password=\"from-file\"");
        assertThat(p)
                .doesNotContainKey("ssl.truststore.location")
                .doesNotContainKey("ssl.endpoint.identification.algorithm");
    }

    @Test
    void jobsLookTheSameSettingsUpByName() throws IOException {
        Path store = Files.writeString(dir.resolve("trust.p12"), "x");
        Map<String, String> args = Map.of(
                "kafka.security.protocol", "SSL",
                "kafka.ssl.truststore", store.toString(),
                "kafka.ssl.truststore.password", "changeit",
                "kafka.ssl.verify.hostname", "false");
        Map<String, String> p = KafkaClientSecurity.from(args::get).properties();
        assertThat(p)
                .containsEntry("ssl.truststore.type", "PKCS12")
                .containsEntry("ssl.truststore.password", "changeit")
                .containsEntry("ssl.endpoint.identification.algorithm", "")
                .doesNotContainKey("sasl.jaas.config");
    }

    @Test
    void whatCannotWorkIsRefusedNamingTheSetting() {
        assertThatThrownBy(() -> of(Map.of("TALLY_KAFKA_SECURITY_PROTOCOL", "TLS")))
                .hasMessageContaining("kafka.security.protocol=TLS");
        assertThatThrownBy(
                        () -> of(Map.of("TALLY_KAFKA_SECURITY_PROTOCOL", "SASL_SSL", "TALLY_KAFKA_SASL_USERNAME", "u")))
                .hasMessageContaining("kafka.sasl.password");
        assertThatThrownBy(() -> of(Map.of(
                        "TALLY_KAFKA_SECURITY_PROTOCOL", "SASL_SSL",
                        "TALLY_KAFKA_SASL_MECHANISM", "GSSAPI",
                        "TALLY_KAFKA_SASL_USERNAME", "u",
                        "TALLY_KAFKA_SASL_PASSWORD", "p")))
                .hasMessageContaining("kafka.sasl.mechanism=GSSAPI");
        assertThatThrownBy(() -> of(Map.of(
                        "TALLY_KAFKA_SECURITY_PROTOCOL",
                        "SSL",
                        "TALLY_KAFKA_SSL_TRUSTSTORE",
                        dir.resolve("missing.pem").toString())))
                .hasMessageContaining("kafka.ssl.truststore=");
        assertThatThrownBy(() -> of(Map.of("TALLY_KAFKA_SSL_VERIFY_HOSTNAME", "yes")))
                .hasMessageContaining("kafka.ssl.verify.hostname=yes");
        assertThatThrownBy(() -> of(Map.of(
                        "TALLY_KAFKA_SECURITY_PROTOCOL", "SASL_SSL",
                        "TALLY_KAFKA_SASL_USERNAME", "u",
                        "TALLY_KAFKA_SASL_PASSWORD_FILE", dir.resolve("none").toString())))
                .hasMessageContaining("kafka.sasl.password.file=");
    }

    @Test
    void everyFieldHasADescriptionAndAnEnvironmentName() {
        List<ServiceSettings.Field> fields = KafkaClientSecurity.FIELDS;
        assertThat(fields).allSatisfy(f -> {
            assertThat(f.description()).isNotBlank();
            assertThat(f.env()).startsWith("TALLY_KAFKA_");
        });
    }
}
