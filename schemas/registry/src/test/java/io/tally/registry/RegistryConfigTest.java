package io.tally.registry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;

class RegistryConfigTest {
    @Test
    void defaultsThenEnvironmentThenFlags() {
        RegistryConfig d = RegistryConfig.from(Map.of(), new String[0]);
        assertThat(d.port()).isEqualTo(8085);
        assertThat(d.host()).isEqualTo("127.0.0.1");
        RegistryConfig e = RegistryConfig.from(Map.of("TALLY_REGISTRY_PORT", "18085"), new String[0]);
        assertThat(e.port()).isEqualTo(18085);
        RegistryConfig f = RegistryConfig.from(Map.of("TALLY_REGISTRY_PORT", "18085"), new String[] {"--port=28085"});
        assertThat(f.port()).isEqualTo(28085);
    }

    @Test
    void badValuesAreNamed() {
        assertThatThrownBy(() -> RegistryConfig.from(Map.of(), new String[] {"--port=x"}))
                .hasMessageContaining("port=x");
        assertThatThrownBy(() -> RegistryConfig.from(Map.of(), new String[] {"--nope=1"}))
                .hasMessageContaining("--nope=1");
        assertThatThrownBy(() -> RegistryConfig.from(Map.of(), new String[] {"--max.body.bytes=1"}))
                .hasMessageContaining("outside");
    }
}
