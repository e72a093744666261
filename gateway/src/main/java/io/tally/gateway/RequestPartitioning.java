package io.tally.gateway;

import io.tally.gateway.service.WriteBatch.Outgoing;
import io.tally.model.Topics;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;
import java.util.function.ToIntFunction;
import org.apache.kafka.common.utils.Utils;

/**
 * Which Kafka partition a TimeSeries request's events go to. {@code key}: each event where
 * Kafka's default partitioner puts its key (namespace/timeSeriesId), so one request of ten ids
 * becomes a batch in each partition: the producer, the broker and every consumer pay per batch.
 * {@code request}: all events of one request in the partition its first event's key hashes to,
 * one batch. Nothing downstream needs an id's events in one partition (the writer and the indexer
 * key nothing by it, rows and documents are idempotent upserts, a read orders by event time), and
 * a request of one id lands where its key says either way. Counter events always follow their
 * key: the rollup's exactly-once counts are per partition and offset.
 */
enum RequestPartitioning {
    KEY,
    REQUEST;

    static RequestPartitioning of(String setting) {
        for (RequestPartitioning p : values()) {
            if (p.name().toLowerCase(Locale.ROOT).equals(setting)) {
                return p;
            }
        }
        throw new IllegalArgumentException(
                GatewayConfig.TIMESERIES_PARTITIONING.name() + "=" + setting + " is neither key nor request");
    }

    /**
     * The one partition for every record of the request, or -1 to let the producer hash each key.
     *
     * @param partitions the topic's partition count (the producer's metadata)
     */
    int partitionOf(List<Outgoing> batch, ToIntFunction<String> partitions) {
        if (this == KEY || batch.size() < 2) {
            return -1;
        }
        Outgoing first = batch.get(0);
        if (!first.topic().equals(Topics.TIMESERIES_EVENTS)) {
            return -1;
        }
        // what Kafka's default partitioner gives the key (murmur2, positive, modulo the partitions)
        return Utils.toPositive(Utils.murmur2(first.key().getBytes(StandardCharsets.UTF_8)))
                % partitions.applyAsInt(first.topic());
    }
}
