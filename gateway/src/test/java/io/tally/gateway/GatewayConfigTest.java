package io.tally.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;

/** The gateway's settings: defaults, the environment and flags, and what is refused. */
class GatewayConfigTest {
    static final String[] NO_FLAGS = {};

    @Test
    void theEventLoopsAreOneACoreUnlessSet() {
        assertThat(GatewayConfig.from(Map.of(), NO_FLAGS).eventLoops())
                .isEqualTo(Runtime.getRuntime().availableProcessors());
        assertThat(GatewayConfig.from(Map.of("TALLY_GATEWAY_EVENT_LOOPS", "1"), NO_FLAGS)
                        .eventLoops())
                .isEqualTo(1);
        assertThat(GatewayConfig.from(Map.of("TALLY_GATEWAY_EVENT_LOOPS", "1"), new String[] {"--http.event.loops=3"})
                        .eventLoops())
                .isEqualTo(3);
    }

    @Test
    void aNegativeOrUnreadableNumberOfEventLoopsIsRefused() {
        for (String bad : new String[] {"-1", "two"}) {
            assertThatThrownBy(() -> GatewayConfig.from(Map.of("TALLY_GATEWAY_EVENT_LOOPS", bad), NO_FLAGS))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("http.event.loops");
        }
    }

    @Test
    void anUnknownCompressionIsRefused() {
        assertThatThrownBy(() -> GatewayConfig.from(Map.of("TALLY_GATEWAY_PRODUCER_COMPRESSION", "brotli"), NO_FLAGS))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("brotli");
    }

    @Test
    void timeSeriesEventsLingerLongerThanCounterEventsUnlessSet() {
        GatewayConfig defaults = GatewayConfig.from(Map.of(), NO_FLAGS);
        assertThat(defaults.intOf(GatewayConfig.LINGER_MS)).isEqualTo(10);
        assertThat(defaults.intOf(GatewayConfig.TIMESERIES_LINGER_MS)).isEqualTo(30);
        assertThat(GatewayConfig.from(
                                Map.of("TALLY_GATEWAY_TIMESERIES_LINGER_MS", "5"),
                                new String[] {"--producer.timeseries.linger.ms=50"})
                        .intOf(GatewayConfig.TIMESERIES_LINGER_MS))
                .isEqualTo(50);
    }
}
