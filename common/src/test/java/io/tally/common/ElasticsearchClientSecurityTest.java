package io.tally.common;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ElasticsearchClientSecurityTest {
    @TempDir
    Path dir;

    private static ElasticsearchClientSecurity of(Map<String, String> env) {
        return ElasticsearchClientSecurity.from(
                ServiceSettings.from(ElasticsearchClientSecurity.FIELDS, env, new String[0]));
    }

    @Test
    void byDefaultNoLogin() {
        ElasticsearchClientSecurity s = of(Map.of());
        assertThat(s.login()).isFalse();
        assertThat(s.authorization()).isNull();
        assertThat(s).hasToString("without a login");
    }

    @Test
    void aLoginIsBasicAuthenticationWithThePasswordOfItsFileAndNeverShowsIt() throws IOException {
        Path file = Files.writeString(dir.resolve("pw"), "from-file\n");
        ElasticsearchClientSecurity s = of(Map.of(
                "TALLY_ELASTICSEARCH_USERNAME", "tally",
                "TALLY_ELASTICSEARCH_PASSWORD", "from-env",
                "TALLY_ELASTICSEARCH_PASSWORD_FILE", file.toString()));
        String expected = Base64.getEncoder().encodeToString("tally:from-file".getBytes(StandardCharsets.UTF_8));
        assertThat(s.authorization()).isEqualTo("Basic " + expected);
        assertThat(s.toString()).contains("as tally").doesNotContain("from-");
    }

    @Test
    void shippedToATaskManagerItCarriesThePasswordFileNotThePassword() throws Exception {
        Path file = Files.writeString(dir.resolve("pw"), "s3cret");
        ElasticsearchClientSecurity s = ElasticsearchClientSecurity.from(
                Map.of("elasticsearch.username", "tally", "elasticsearch.password.file", file.toString())::get);
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
            out.writeObject(s);
        }
        assertThat(bytes.toString(StandardCharsets.ISO_8859_1)).doesNotContain("s3cret");
        ElasticsearchClientSecurity shipped;
        try (ObjectInputStream in = new ObjectInputStream(new ByteArrayInputStream(bytes.toByteArray()))) {
            shipped = (ElasticsearchClientSecurity) in.readObject();
        }
        Files.writeString(file, "rotated\n");
        assertThat(shipped.password()).isEqualTo("rotated");
        assertThat(shipped).isEqualTo(s);
    }

    @Test
    void whatCannotWorkIsRefusedNamingTheSetting() throws IOException {
        assertThatThrownBy(() -> of(Map.of("TALLY_ELASTICSEARCH_USERNAME", "tally")))
                .hasMessageContaining("elasticsearch.password");
        assertThatThrownBy(() -> of(Map.of(
                        "TALLY_ELASTICSEARCH_SSL_TRUSTSTORE",
                        dir.resolve("none.pem").toString())))
                .hasMessageContaining("elasticsearch.ssl.truststore=");
        Path empty = Files.writeString(dir.resolve("empty.pem"), "not a certificate\n");
        assertThatThrownBy(() -> of(Map.of("TALLY_ELASTICSEARCH_SSL_TRUSTSTORE", empty.toString()))
                        .sslContext())
                .hasMessageContaining("elasticsearch.ssl.truststore=");
    }
}
