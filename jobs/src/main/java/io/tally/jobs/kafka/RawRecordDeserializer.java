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
        Header v = r.headers().lastHeader(NamespaceChange.VERSION_HEADER);
        if (v != null) {
            try {
                raw.namespaceVersion = Long.parseLong(new String(v.value(), StandardCharsets.US_ASCII));
            } catch (NumberFormatException e) {
                raw.namespaceVersion = 0; // not ours to trust: processed with the config at hand
            }
        }
        out.collect(raw);
    }

    @Override
    public TypeInformation<RawRecord> getProducedType() {
        return TypeInformation.of(RawRecord.class);
    }
}
