package io.tally.serde;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tally.model.TallySchemas;
import java.nio.ByteBuffer;
import java.util.List;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.generic.GenericRecordBuilder;
import org.junit.jupiter.api.Test;

class AvroSerdeTest {
    private final InMemoryRegistry registry = new InMemoryRegistry();
    private final AvroSerde serde = new AvroSerde(registry);

    static GenericRecord timeSeriesEvent() {
        GenericRecord item = new GenericRecordBuilder(TallySchemas.EVENT_ITEM)
                .set("key", "deviceType")
                .set("value", ByteBuffer.wrap(new byte[] {1, 2, 3}))
                .build();
        return new GenericRecordBuilder(TallySchemas.TIME_SERIES_EVENT)
                .set("namespace", "playback")
                .set("time_series_id", "profile-1")
                .set("event_time", 1_763_800_000_000_000L)
                .set("event_id", "e-1")
                .set("items", List.of(item))
                .set("source", "test")
                .build();
    }

    @Test
    void roundTripsInConfluentWireFormat() {
        GenericRecord rec = timeSeriesEvent();
        byte[] bytes = serde.serialize("tally.timeseries.events", rec);
        assertThat(bytes[0]).isEqualTo((byte) 0);
        int id = ByteBuffer.wrap(bytes, 1, 4).getInt();
        assertThat(registry.bySubject.get("tally.timeseries.events-value")).containsValue(id);
        assertThat(serde.deserialize(bytes)).isEqualTo(rec);
    }

    @Test
    void cachesTheRegistryAfterTheFirstRecord() {
        AvroSerde cached = new AvroSerde(new RestSchemaRegistryClientCache(registry));
        for (int i = 0; i < 100; i++) {
            cached.deserialize(cached.serialize("t", timeSeriesEvent()));
        }
        assertThat(registry.calls).isEqualTo(2); // one register, one id lookup
    }

    @Test
    void oldAndNewProducersBothDecodeForTheReader() {
        Schema v1 = new Schema.Parser()
                .parse("{\"type\":\"record\",\"name\":\"R\",\"fields\":[" + "{\"name\":\"a\",\"type\":\"string\"}]}");
        Schema v2 = new Schema.Parser()
                .parse("{\"type\":\"record\",\"name\":\"R\",\"fields\":["
                        + "{\"name\":\"a\",\"type\":\"string\"},{\"name\":\"b\",\"type\":\"int\",\"default\":7}]}");
        byte[] old =
                serde.serialize("t", new GenericRecordBuilder(v1).set("a", "x").build());
        byte[] neu = serde.serialize(
                "t", new GenericRecordBuilder(v2).set("a", "y").set("b", 9).build());
        GenericRecord oldAsV2 = serde.deserialize(old, v2);
        assertThat(oldAsV2.get("a").toString()).isEqualTo("x");
        assertThat(oldAsV2.get("b")).isEqualTo(7);
        GenericRecord newAsV1 = serde.deserialize(neu, v1);
        assertThat(newAsV1.get("a").toString()).isEqualTo("y");
        assertThat(newAsV1.getSchema().getField("b")).isNull();
    }

    @Test
    void badMagicByteIsNamed() {
        byte[] bytes = serde.serialize("t", timeSeriesEvent());
        bytes[0] = 7;
        assertThatThrownBy(() -> serde.deserialize(bytes))
                .isInstanceOf(SerdeException.class)
                .hasMessageContaining("unknown magic byte 0x07");
    }

    @Test
    void shortOrNullPayloadsAreRejected() {
        assertThatThrownBy(() -> serde.deserialize(new byte[] {0, 0, 1})).hasMessageContaining("shorter than");
        assertThatThrownBy(() -> serde.deserialize(null)).hasMessageContaining("tombstone");
    }

    @Test
    void unknownSchemaIdIsReportedWithTheRegistryCode() {
        byte[] bytes = {0, 0, 0, 0x30, 0x39, 2, 'a'};
        assertThatThrownBy(() -> serde.deserialize(bytes))
                .isInstanceOf(RegistryException.class)
                .hasMessageContaining("12345")
                .hasMessageContaining("40403");
    }

    @Test
    void corruptAvroBytesAreRejectedNotMisread() {
        byte[] good = serde.serialize("t", timeSeriesEvent());
        byte[] truncated = java.util.Arrays.copyOf(good, good.length - 3);
        assertThatThrownBy(() -> serde.deserialize(truncated))
                .isInstanceOf(SerdeException.class)
                .hasMessageContaining("corrupt Avro payload");
        byte[] trailing = java.util.Arrays.copyOf(good, good.length + 2);
        assertThatThrownBy(() -> serde.deserialize(trailing)).hasMessageContaining("left over");
    }

    @Test
    void aRecordThatDoesNotMatchItsSchemaIsRejected() {
        GenericRecord bad = new GenericData.Record(TallySchemas.COUNTER_EVENT); // required fields unset
        assertThatThrownBy(() -> serde.serialize("t", bad))
                .isInstanceOf(SerdeException.class)
                .hasMessageContaining("tally.v1.CounterEvent");
    }

    /** Wraps a registry in the same caching the REST client does, to count round trips. */
    static final class RestSchemaRegistryClientCache implements SchemaRegistryClient {
        private final SchemaRegistryClient inner;
        private final java.util.Map<String, Integer> ids = new java.util.concurrent.ConcurrentHashMap<>();
        private final java.util.Map<Integer, Schema> schemas = new java.util.concurrent.ConcurrentHashMap<>();

        RestSchemaRegistryClientCache(SchemaRegistryClient inner) {
            this.inner = inner;
        }

        @Override
        public int register(String subject, Schema schema) {
            return ids.computeIfAbsent(subject + schema, k -> inner.register(subject, schema));
        }

        @Override
        public Schema schemaById(int id) {
            return schemas.computeIfAbsent(id, inner::schemaById);
        }

        @Override
        public int lookup(String subject, Schema schema) {
            return inner.lookup(subject, schema);
        }
    }

    @Test
    void aGeneratedRecordSharesItsSchemaIdWithGenericRecordsAndReadsBackTyped() {
        AvroSerde serde = new AvroSerde(registry);
        tally.v1.CounterEvent specific = new tally.v1.CounterEvent(
                "ns", "c", tally.v1.CounterOp.ADD, 3L, java.time.Instant.ofEpochSecond(1, 2_000), "e1", "test");
        GenericRecord generic = new GenericRecordBuilder(TallySchemas.COUNTER_EVENT)
                .set("namespace", "ns")
                .set("counter", "c")
                .set(
                        "op",
                        new GenericData.EnumSymbol(
                                TallySchemas.COUNTER_EVENT.getField("op").schema(), "ADD"))
                .set("delta", 3L)
                .set("event_time", 1_000_002L)
                .set("event_id", "e1")
                .set("source", "test")
                .build();
        byte[] fromSpecific = serde.serialize("t", specific);
        byte[] fromGeneric = serde.serialize("t", generic);
        assertThat(fromSpecific).isEqualTo(fromGeneric); // one schema id, the same bytes
        tally.v1.CounterEvent back = serde.deserialize(fromGeneric, tally.v1.CounterEvent.class);
        assertThat(back).isEqualTo(specific);
        assertThat(serde.deserialize(fromSpecific, tally.v1.CounterEvent.class).getEventTime())
                .isEqualTo(java.time.Instant.ofEpochSecond(1, 2_000));
    }
}
