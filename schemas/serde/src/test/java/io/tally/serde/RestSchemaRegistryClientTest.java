package io.tally.serde;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** An unreachable registry is "unavailable" (retry), never "this record is undecodable". */
class RestSchemaRegistryClientTest {
    @Test
    void anUnreachableRegistryIsUnavailableNotAnUnknownSchema() {
        RestSchemaRegistryClient client = new RestSchemaRegistryClient("http://127.0.0.1:1", Duration.ofSeconds(2));
        assertThatThrownBy(() -> client.schemaById(7))
                .isInstanceOf(RegistryUnavailableException.class)
                .hasMessageContaining("unreachable");
    }
}
