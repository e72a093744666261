package io.tally.gateway.service;

import io.tally.namespace.NamespaceConfig;
import java.util.List;
import org.apache.avro.specific.SpecificRecordBase;

/** A validated write request: the records to produce, nothing produced yet. */
public record WriteBatch(
        NamespaceConfig namespace, List<Outgoing> records, List<String> eventIds, List<Integer> generatedIds) {

    /**
     * One record for Kafka, with a digest of the idempotency key it carries and one of its
     * payload, the namespace version it was accepted under and when that namespace was created
     * (both sent as headers: a job waits for that config), its event time
     * (judged against the accept window), and the request field that gave that time.
     */
    public record Outgoing(
            String topic,
            String key,
            SpecificRecordBase value,
            long idempotencyKey,
            long payloadDigest,
            long namespaceVersion,
            long namespaceCreatedMicros,
            long eventTimeMicros,
            String timeField) {}
}
