package io.tally.jobs.kafka;

import io.tally.namespace.NamespaceChange;
import java.nio.charset.StandardCharsets;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.connector.kafka.source.reader.deserializer.KafkaRecordDeserializationSchema;
import org.apache.flink.util.Collector;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Header;

/** Keeps each record's bytes, coordinates and timestamp: decoding happens later, so a bad record can be dead-lettered whole. */
public final class RawRecordDeserializer implements KafkaRecordDeserializationSchema<RawRecord> {
    @Override
    public void deserialize(ConsumerRecord<byte[], byte[]> r, Collector<RawRecord> out) {
        RawRecord raw = new RawRecord(r.topic(), r.partition(), r.offset(), r.timestamp(), r.key(), r.value());
        raw.namespaceVersion = digits(r.headers().lastHeader(NamespaceChange.VERSION_HEADER));
        raw.namespaceCreatedMicros = digits(r.headers().lastHeader(NamespaceChange.CREATED_HEADER));
        out.collect(raw);
    }

    /** A header of ASCII digits; 0 when absent or not ours to trust (processed with the config at hand). */
    static long digits(Header h) {
        if (h == null || h.value() == null) {
            return 0;
        }
        try {
            return Long.parseLong(new String(h.value(), StandardCharsets.US_ASCII));
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    @Override
    public TypeInformation<RawRecord> getProducedType() {
        return TypeInformation.of(RawRecord.class);
    }
}
