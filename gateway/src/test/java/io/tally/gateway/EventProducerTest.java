package io.tally.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.model.Topics;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Which producer writes which topic: time-series events get a producer of their own only when
 * they linger otherwise than counter events. No broker is needed: a producer connects on its
 * first send.
 */
class EventProducerTest {
    private static EventProducer producer(Map<String, String> env) {
        Map<String, String> settings = new java.util.HashMap<>(env);
        settings.put("TALLY_KAFKA_BOOTSTRAP", "127.0.0.1:1");
        return new EventProducer(GatewayConfig.from(settings, GatewayConfigTest.NO_FLAGS), null, new GatewayMetrics());
    }

    @Test
    void timeSeriesEventsHaveTheirOwnProducerByDefault() {
        try (EventProducer p = producer(Map.of())) {
            assertThat(p.producers()).hasSize(2);
            assertThat(p.producerOf(Topics.TIMESERIES_EVENTS)).isNotSameAs(p.producerOf(Topics.COUNTER_EVENTS));
            assertThat(p.producerOf(Topics.COUNTER_EVENTS))
                    .isSameAs(p.producers().get(0));
        }
    }

    @Test
    void oneProducerWritesBothTopicsWhenTheyLingerAlike() {
        try (EventProducer p = producer(
                Map.of("TALLY_GATEWAY_PRODUCER_LINGER_MS", "20", "TALLY_GATEWAY_TIMESERIES_LINGER_MS", "20"))) {
            assertThat(p.producers()).hasSize(1);
            assertThat(p.producerOf(Topics.TIMESERIES_EVENTS)).isSameAs(p.producerOf(Topics.COUNTER_EVENTS));
        }
    }
}
