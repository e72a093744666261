package io.tally.jobs.kafka;

import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.connector.kafka.source.reader.deserializer.KafkaRecordDeserializationSchema;
import org.apache.flink.util.Collector;
import org.apache.kafka.clients.consumer.ConsumerRecord;

/** Keeps each record's bytes, coordinates and timestamp: decoding happens later, so a bad record can be dead-lettered whole. */
public final class RawRecordDeserializer implements KafkaRecordDeserializationSchema<RawRecord> {
    @Override
    public void deserialize(ConsumerRecord<byte[], byte[]> r, Collector<RawRecord> out) {
        out.collect(new RawRecord(r.topic(), r.partition(), r.offset(), r.timestamp(), r.key(), r.value()));
    }

    @Override
    public TypeInformation<RawRecord> getProducedType() {
        return TypeInformation.of(RawRecord.class);
    }
}
