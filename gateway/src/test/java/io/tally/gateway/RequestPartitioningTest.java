package io.tally.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.tally.gateway.service.WriteBatch.Outgoing;
import io.tally.model.Topics;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class RequestPartitioningTest {
    static Outgoing event(String topic, String key) {
        return new Outgoing(topic, key, null, 0, 0, 1, 0, "eventTime");
    }

    static List<Outgoing> request(String topic, int ids) {
        List<Outgoing> out = new ArrayList<>();
        for (int i = 0; i < ids; i++) {
            out.add(event(topic, "playback/id-" + i));
        }
        return out;
    }

    static int keyed(String key, int partitions) {
        return org.apache.kafka.clients.producer.internals.BuiltInPartitioner.partitionForKey(
                key.getBytes(StandardCharsets.UTF_8), partitions); // the producer's own, to compare with
    }

    @Test
    void aRequestOfManyIdsGoesWhereItsFirstKeyHashes() {
        List<Outgoing> req = request(Topics.TIMESERIES_EVENTS, 10);
        assertEquals(keyed("playback/id-0", 12), RequestPartitioning.REQUEST.partitionOf(req, t -> 12));
        // the ids alone would have spread over several partitions
        assertEquals(true, req.stream().map(o -> keyed(o.key(), 12)).distinct().count() > 1);
    }

    @Test
    void keyPartitioningAndSingleEventsAndCountersLeaveItToTheKey() {
        assertEquals(-1, RequestPartitioning.KEY.partitionOf(request(Topics.TIMESERIES_EVENTS, 10), t -> 12));
        assertEquals(-1, RequestPartitioning.REQUEST.partitionOf(request(Topics.TIMESERIES_EVENTS, 1), t -> 12));
        assertEquals(-1, RequestPartitioning.REQUEST.partitionOf(request(Topics.COUNTER_EVENTS, 3), t -> 12));
    }

    @Test
    void theSettingIsCheckedByName() {
        assertEquals(RequestPartitioning.KEY, RequestPartitioning.of("key"));
        assertEquals(RequestPartitioning.REQUEST, RequestPartitioning.of("request"));
        IllegalArgumentException e =
                assertThrows(IllegalArgumentException.class, () -> RequestPartitioning.of("random"));
        assertEquals("producer.timeseries.partitioning=random is neither key nor request", e.getMessage());
    }
}
