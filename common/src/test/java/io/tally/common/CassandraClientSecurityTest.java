package io.tally.common;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CassandraClientSecurityTest {
    @TempDir
    Path dir;

    private static CassandraClientSecurity of(Map<String, String> env) {
        return CassandraClientSecurity.from(ServiceSettings.from(CassandraClientSecurity.FIELDS, env, new String[0]));
    }

    @Test
    void byDefaultNoLoginAndNoTls() {
        CassandraClientSecurity s = of(Map.of());
        assertThat(s.login()).isFalse();
        assertThat(s.ssl()).isFalse();
        assertThat(s.toString()).isEqualTo("without a login, no TLS");
    }

    @Test
    void aLoginTakesItsPasswordFromTheEnvironmentOrAFileAndNeverShowsIt() throws IOException {
        assertThat(of(Map.of("TALLY_CASSANDRA_USERNAME", "tally", "TALLY_CASSANDRA_PASSWORD", "s3cret"))
                        .password())
                .isEqualTo("s3cret");
        Path file = Files.writeString(dir.resolve("pw"), "from-file\n");
        CassandraClientSecurity s = of(Map.of(
                "TALLY_CASSANDRA_USERNAME", "tally",
                "TALLY_CASSANDRA_PASSWORD", "from-env",
                "TALLY_CASSANDRA_PASSWORD_FILE", file.toString()));
        assertThat(s.password()).isEqualTo("from-file");
        assertThat(s.toString()).contains("as tally").doesNotContain("from-");
    }

    @Test
    void shippedToATaskManagerItCarriesThePasswordFileNotThePassword() throws Exception {
        Path file = Files.writeString(dir.resolve("pw"), "s3cret");
        CassandraClientSecurity s = CassandraClientSecurity.from(
                Map.of("cassandra.username", "tally", "cassandra.password.file", file.toString())::get);
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
            out.writeObject(s);
        }
        assertThat(bytes.toString(java.nio.charset.StandardCharsets.ISO_8859_1)).doesNotContain("s3cret");
        CassandraClientSecurity shipped;
        try (ObjectInputStream in = new ObjectInputStream(new ByteArrayInputStream(bytes.toByteArray()))) {
            shipped = (CassandraClientSecurity) in.readObject();
        }
        Files.writeString(file, "rotated\n"); // read where it is used, when it is used
        assertThat(shipped.password()).isEqualTo("rotated");
    }

    @Test
    void tlsTrustsAPemBundleOrAPkcs12Store() {
        Path pem = Path.of("/etc/ssl/certs/ca-certificates.crt");
        assumeTrue(Files.isReadable(pem), "no PEM bundle of the system's CAs here");
        CassandraClientSecurity s =
                of(Map.of("TALLY_CASSANDRA_SSL", "true", "TALLY_CASSANDRA_SSL_TRUSTSTORE", pem.toString()));
        assertThat(s.sslContext().getProtocol()).isEqualTo("TLS");
        Path cacerts = Path.of(System.getProperty("java.home"), "lib", "security", "cacerts");
        assertThat(of(Map.of(
                                "TALLY_CASSANDRA_SSL", "true",
                                "TALLY_CASSANDRA_SSL_TRUSTSTORE", cacerts.toString(),
                                "TALLY_CASSANDRA_SSL_TRUSTSTORE_PASSWORD", "changeit"))
                        .sslContext())
                .isNotNull();
    }

    @Test
    void whatCannotWorkIsRefusedNamingTheSetting() throws IOException {
        assertThatThrownBy(() -> of(Map.of("TALLY_CASSANDRA_USERNAME", "tally")))
                .hasMessageContaining("cassandra.password");
        assertThatThrownBy(() -> of(Map.of("TALLY_CASSANDRA_SSL", "yes"))).hasMessageContaining("cassandra.ssl=yes");
        assertThatThrownBy(() -> of(Map.of(
                        "TALLY_CASSANDRA_SSL",
                        "true",
                        "TALLY_CASSANDRA_SSL_TRUSTSTORE",
                        dir.resolve("none.pem").toString())))
                .hasMessageContaining("cassandra.ssl.truststore=");
        Path empty = Files.writeString(dir.resolve("empty.pem"), "not a certificate\n");
        assertThatThrownBy(() -> of(Map.of(
                                "TALLY_CASSANDRA_SSL", "true", "TALLY_CASSANDRA_SSL_TRUSTSTORE", empty.toString()))
                        .sslContext())
                .hasMessageContaining("cassandra.ssl.truststore=");
    }
}
