package io.tally.gateway.service;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.tally.namespace.NamespaceConfig;
import io.tally.namespace.NamespaceConfigParser;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/** The partition history the control plane keeps when a time_partition changes (pure logic; the store itself is tested on the stack). */
class NamespaceStoreTest {
    static final ObjectMapper JSON = new ObjectMapper();

    static JsonNode json(String s) throws Exception {
        return JSON.readTree(s);
    }

    static long micros(String iso) {
        return Instant.parse(iso).toEpochMilli() * 1000;
    }

    @Test
    void aNewTimePartitionAppliesAfterTheSlicesThatExist() throws Exception {
        JsonNode daily = json(
                "{\"kind\":\"timeseries\",\"time_partition\":{\"seconds_per_slice\":86400,\"seconds_per_bucket\":3600,\"buckets_per_id\":4}}");
        NamespaceStore.Row row = new NamespaceStore.Row("p", "timeseries", daily, 1, "");
        JsonNode hourly = json(
                "{\"kind\":\"timeseries\",\"time_partition\":{\"seconds_per_slice\":3600,\"seconds_per_bucket\":600,\"buckets_per_id\":2},"
                        + "\"time_partition_history\":[{\"until\":\"2000-01-01T00:00:00Z\",\"seconds_per_slice\":3600,\"seconds_per_bucket\":600}]}");
        NamespaceConfig next = NamespaceConfigParser.parse("p", hourly);
        JsonNode stored = NamespaceStore.withHistory(row, next, hourly, micros("2026-11-22T13:00:00Z"));
        // today's and tomorrow's daily slices exist: hourly slices start the day after
        assertThat(stored.get("time_partition_history")).hasSize(1);
        assertThat(stored.get("time_partition_history").get(0).get("until").asText())
                .isEqualTo("2026-11-24T00:00:00Z");
        assertThat(stored.get("time_partition_history")
                        .get(0)
                        .get("seconds_per_slice")
                        .asLong())
                .isEqualTo(86_400);

        // a later change of something else keeps the history; the user's own history is ignored
        NamespaceStore.Row changed = new NamespaceStore.Row("p", "timeseries", stored, 2, "");
        JsonNode sameLayout =
                json("{\"kind\":\"timeseries\",\"accept_limit\":\"9s\",\"time_partition\":{\"seconds_per_slice\":3600,"
                        + "\"seconds_per_bucket\":600,\"buckets_per_id\":2}}");
        JsonNode kept = NamespaceStore.withHistory(
                changed, NamespaceConfigParser.parse("p", sameLayout), sameLayout, micros("2026-11-22T14:00:00Z"));
        assertThat(kept.get("time_partition_history")).isEqualTo(stored.get("time_partition_history"));
        assertThat(NamespaceStore.withHistory(null, next, hourly, 0).has("time_partition_history"))
                .isFalse();
    }

    static JsonNode partition(long slice) throws Exception {
        return json("{\"kind\":\"timeseries\",\"time_partition\":{\"seconds_per_slice\":" + slice
                + ",\"seconds_per_bucket\":3600,\"buckets_per_id\":4}}");
    }

    @Test
    void aFlipBackBeforeTheChangeTookEffectCancelsItAndAnotherReplacesIt() throws Exception {
        long now = micros("2026-11-23T14:00:00Z");
        NamespaceStore.Row daily = new NamespaceStore.Row("p", "timeseries", partition(86_400), 1, "");
        JsonNode twoDays = NamespaceStore.withHistory(
                daily, NamespaceConfigParser.parse("p", partition(172_800)), partition(172_800), now);
        assertThat(twoDays.get("time_partition_history")).hasSize(1);
        NamespaceStore.Row pending = new NamespaceStore.Row("p", "timeseries", twoDays, 2, "");
        // 1d -> 2d -> 1d within the window (a 500 before): the pending change is cancelled
        JsonNode back = NamespaceStore.withHistory(
                pending, NamespaceConfigParser.parse("p", partition(86_400)), partition(86_400), now + 1);
        assertThat(back.has("time_partition_history")).isFalse();
        // 1d -> 2d -> 4d: the pending change is replaced at its boundary, or refused naming the field
        try {
            JsonNode four = NamespaceStore.withHistory(
                    pending, NamespaceConfigParser.parse("p", partition(345_600)), partition(345_600), now + 1);
            assertThat(four.get("time_partition_history")).hasSize(1);
        } catch (ServiceException e) {
            assertThat(e.code()).isEqualTo("INVALID_NAMESPACE_CONFIG");
            assertThat(e.field()).isEqualTo("time_partition");
        }
    }

    @Test
    void eventBucketsByTimeApplyFromTheSliceAfterTheOnesThatExist() throws Exception {
        // a retried event must find its partition: the slices made keep their spread
        NamespaceStore.Row byId = new NamespaceStore.Row("p", "timeseries", partition(86_400), 1, "");
        JsonNode byTime = json("{\"kind\":\"timeseries\",\"time_partition\":{\"seconds_per_slice\":86400,"
                + "\"seconds_per_bucket\":3600,\"buckets_per_id\":4,\"event_buckets_by\":\"event_time\"}}");
        JsonNode stored = NamespaceStore.withHistory(
                byId, NamespaceConfigParser.parse("p", byTime), byTime, micros("2026-11-22T13:00:00Z"));
        JsonNode earlier = stored.get("time_partition_history").get(0);
        assertThat(earlier.get("until").asText()).isEqualTo("2026-11-24T00:00:00Z");
        assertThat(earlier.has("event_buckets_by")).isFalse(); // by id, the default
        NamespaceConfig parsed = NamespaceConfigParser.parse("p", stored);
        assertThat(parsed.timePartition().eventBuckets()).isEqualTo(NamespaceConfig.EventBuckets.EVENT_TIME);
        assertThat(parsed.partitionHistory().get(0).partition().eventBuckets())
                .isEqualTo(NamespaceConfig.EventBuckets.EVENT_ID);
    }
}
