package io.tally.common;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tally.common.ServiceSettings.Field;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ServiceSettingsTest {
    static final Field PORT = new Field("port", "X_PORT", "8080", "HTTP port.");
    static final List<Field> FIELDS = List.of(PORT);

    @Test
    void defaultsThenEnvironmentThenFlags() {
        assertThat(ServiceSettings.from(FIELDS, Map.of(), new String[0]).intIn(PORT, 1, 65535))
                .isEqualTo(8080);
        assertThat(ServiceSettings.from(FIELDS, Map.of("X_PORT", "9"), new String[0])
                        .get(PORT))
                .isEqualTo("9");
        assertThat(ServiceSettings.from(FIELDS, Map.of("X_PORT", "9"), new String[] {"--port=7"})
                        .get(PORT))
                .isEqualTo("7");
    }

    @Test
    void errorsNameTheSetting() {
        assertThatThrownBy(() -> ServiceSettings.from(FIELDS, Map.of(), new String[] {"--nope=1"}))
                .hasMessageContaining("--nope=1")
                .hasMessageContaining("X_PORT");
        assertThatThrownBy(() -> ServiceSettings.from(FIELDS, Map.of("X_PORT", "x"), new String[0])
                        .intIn(PORT, 1, 9))
                .hasMessageContaining("port=x");
        assertThatThrownBy(() -> ServiceSettings.from(FIELDS, Map.of("X_PORT", "99"), new String[0])
                        .intIn(PORT, 1, 9))
                .hasMessageContaining("outside");
    }
}
