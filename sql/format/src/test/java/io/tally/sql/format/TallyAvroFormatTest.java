package io.tally.sql.format;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.time.LocalDateTime;
import java.util.List;
import java.util.Map;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericDatumWriter;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.io.BinaryEncoder;
import org.apache.avro.io.EncoderFactory;
import org.apache.flink.api.common.serialization.DeserializationSchema;
import org.apache.flink.api.common.serialization.SerializationSchema;
import org.apache.flink.formats.avro.SchemaCoder;
import org.apache.flink.table.api.DataTypes;
import org.apache.flink.table.api.ValidationException;
import org.apache.flink.table.catalog.Column;
import org.apache.flink.table.catalog.ResolvedSchema;
import org.apache.flink.table.connector.source.DynamicTableSource;
import org.apache.flink.table.data.GenericArrayData;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.data.TimestampData;
import org.apache.flink.table.factories.TestDynamicTableFactory;
import org.apache.flink.table.factories.utils.FactoryMocks;
import org.apache.flink.table.runtime.connector.source.ScanRuntimeProviderContext;
import org.apache.flink.table.runtime.typeutils.InternalTypeInfo;
import org.apache.flink.table.types.DataType;
import org.apache.flink.table.types.logical.RowType;
import org.junit.jupiter.api.Test;

class TallyAvroFormatTest {
    private static final String SUBJECT = "tally.counter.events-value";

    /** Version 1 of a counter event: an enum, a timestamp-micros, an array of records. */
    private static final Schema V1 = new Schema.Parser()
            .parse(
                    """
            {"type":"record","name":"CounterEvent","namespace":"tally.v1","fields":[
              {"name":"namespace","type":"string"},
              {"name":"op","type":{"type":"enum","name":"CounterOp","symbols":["ADD","CLEAR"]}},
              {"name":"event_time","type":{"type":"long","logicalType":"timestamp-micros"}},
              {"name":"tags","type":{"type":"array","items":{"type":"record","name":"Tag","fields":[
                 {"name":"key","type":"string"},{"name":"value","type":"bytes"}]}}}]}""");

    /** Version 2 adds a field with a default (a compatible change). */
    private static final Schema V2 = new Schema.Parser()
            .parse(V1.toString()
                    .replace("]}}}]}", "]}}},{\"name\":\"source\",\"type\":\"string\",\"default\":\"unknown\"}]}"));

    private static final DataType COLUMNS = DataTypes.ROW(
            DataTypes.FIELD("namespace", DataTypes.STRING()),
            DataTypes.FIELD("op", DataTypes.STRING()),
            DataTypes.FIELD("event_time", DataTypes.TIMESTAMP(6)),
            DataTypes.FIELD(
                    "tags",
                    DataTypes.ARRAY(DataTypes.ROW(
                            DataTypes.FIELD("key", DataTypes.STRING()), DataTypes.FIELD("value", DataTypes.BYTES())))),
            DataTypes.FIELD("source", DataTypes.STRING()));

    private static final long MICROS = 1_764_000_000_123_456L;

    private static final SchemaCoder.SchemaCoderProvider CODER =
            () -> new RegistrySchemaCoder(MemoryRegistry.SHARED, SUBJECT);

    @Test
    void aRecordOfAnOlderVersionReadsWithTheNewestSchemaKeepingMicrosAndEnums() throws Exception {
        int v1 = MemoryRegistry.SHARED.register(SUBJECT, V1);
        byte[] bytes = confluent(v1, V1, record(V1));
        MemoryRegistry.SHARED.register(SUBJECT, V2);
        RowType rowType = (RowType) COLUMNS.getLogicalType();
        Schema reader =
                ReaderSchemas.forColumns(MemoryRegistry.SHARED.latest(SUBJECT).schema(), rowType, SUBJECT);

        RowData row = open(TallyAvroFormatFactory.decoder(rowType, InternalTypeInfo.of(rowType), reader, CODER))
                .deserialize(bytes);

        assertThat(row.getString(0).toString()).isEqualTo("video_views");
        assertThat(row.getString(1).toString()).isEqualTo("CLEAR");
        TimestampData t = row.getTimestamp(2, 6);
        assertThat(TallyAvroConverters.micros(t)).isEqualTo(MICROS);
        assertThat(t.toLocalDateTime()).isEqualTo(LocalDateTime.parse("2025-11-24T16:00:00.123456"));
        RowData tag = row.getArray(3).getRow(0, 2);
        assertThat(tag.getString(0).toString()).isEqualTo("k");
        assertThat(tag.getBinary(1)).containsExactly(1, 2);
        assertThat(row.getString(4).toString()).isEqualTo("unknown"); // v2's default, absent from v1
    }

    @Test
    void aProjectionReadsOnlyItsColumnsInItsOrder() throws Exception {
        int v1 = MemoryRegistry.SHARED.register("p-value", V1);
        RowType projected = RowType.of(
                new org.apache.flink.table.types.logical.LogicalType[] {
                    DataTypes.TIMESTAMP(6).getLogicalType(), DataTypes.STRING().getLogicalType()
                },
                new String[] {"event_time", "namespace"});
        Schema reader = ReaderSchemas.forColumns(V1, projected, "p-value");
        RowData row = open(TallyAvroFormatFactory.decoder(projected, InternalTypeInfo.of(projected), reader, CODER))
                .deserialize(confluent(v1, V1, record(V1)));
        assertThat(TallyAvroConverters.micros(row.getTimestamp(0, 6))).isEqualTo(MICROS);
        assertThat(row.getString(1).toString()).isEqualTo("video_views");
    }

    @Test
    void writesUseTheSubjectsSchemaAndIdAndReadBackTheSame() throws Exception {
        String subject = "w-value";
        int id = MemoryRegistry.SHARED.register(subject, V2);
        RowType rowType = (RowType) COLUMNS.getLogicalType();
        ReaderSchemas.checkWritable(V2, rowType, subject);
        GenericRowData row = GenericRowData.of(
                StringData.fromString("ns"),
                StringData.fromString("ADD"),
                TimestampData.fromEpochMillis(MICROS / 1000, (int) (MICROS % 1000) * 1000),
                new GenericArrayData(new Object[] {GenericRowData.of(StringData.fromString("k"), new byte[] {7})}),
                StringData.fromString("sql"));
        SchemaCoder.SchemaCoderProvider coder = () -> new RegistrySchemaCoder(MemoryRegistry.SHARED, subject);
        SerializationSchema<RowData> encoder = TallyAvroFormatFactory.encoder(rowType, V2, coder);
        encoder.open(null);
        byte[] bytes = encoder.serialize(row);

        assertThat(bytes[0]).isEqualTo((byte) 0);
        assertThat(ByteBuffer.wrap(bytes, 1, 4).getInt()).isEqualTo(id);
        RowData back = open(TallyAvroFormatFactory.decoder(
                        rowType, InternalTypeInfo.of(rowType), ReaderSchemas.forColumns(V2, rowType, subject), coder))
                .deserialize(bytes);
        assertThat(back).isEqualTo(row);
    }

    @Test
    void aRowWhoseColumnsAreNotTheSubjectsFieldsIsNotWritable() {
        RowType rowType = (RowType)
                DataTypes.ROW(DataTypes.FIELD("op", DataTypes.STRING())).getLogicalType();
        assertThatThrownBy(() -> ReaderSchemas.checkWritable(V1, rowType, SUBJECT))
                .isInstanceOf(ValidationException.class)
                .hasMessageContaining("[namespace, op, event_time, tags]");
        assertThatThrownBy(() -> ReaderSchemas.forColumns(
                        V1,
                        (RowType) DataTypes.ROW(DataTypes.FIELD("nope", DataTypes.STRING()))
                                .getLogicalType(),
                        SUBJECT))
                .isInstanceOf(ValidationException.class)
                .hasMessageContaining("'nope' is not a field");
    }

    @Test
    void bytesNotInTheWireFormatAreRefusedWithTheReason() {
        RowType rowType = (RowType) COLUMNS.getLogicalType();
        assertThatThrownBy(() -> open(TallyAvroFormatFactory.decoder(rowType, InternalTypeInfo.of(rowType), V2, CODER))
                        .deserialize(new byte[] {'{', '"', 'a'}))
                .isInstanceOf(IOException.class)
                .hasRootCauseMessage("not in the Confluent wire format: first byte is 123, not 0");
    }

    @Test
    void aDecoderThatIgnoresParseErrorsSkipsTheRecord() throws Exception {
        RowType rowType = (RowType) COLUMNS.getLogicalType();
        DeserializationSchema<RowData> skipping =
                new SkippingDecoder(TallyAvroFormatFactory.decoder(rowType, InternalTypeInfo.of(rowType), V2, CODER));
        skipping.open(null);
        assertThat(skipping.deserialize(new byte[] {7, 1})).isNull();
        assertThat(skipping.deserialize(new byte[] {0, 0, 0, 0x7f, 0x7f})).isNull(); // an id the registry lacks
    }

    @Test
    void theFactoryIsFoundByItsIdentifierAndChecksItsOptions() {
        ResolvedSchema schema = ResolvedSchema.of(
                Column.physical("namespace", DataTypes.STRING()), Column.physical("op", DataTypes.STRING()));
        Map<String, String> options = Map.of(
                "connector", TestDynamicTableFactory.IDENTIFIER,
                "target", "t",
                "buffer-size", "1000",
                "format", TallyAvroFormatFactory.IDENTIFIER,
                "tally-avro.url", "http://127.0.0.1:1");
        DynamicTableSource source = FactoryMocks.createTableSource(schema, options);
        TestDynamicTableFactory.DynamicTableSourceMock mock = (TestDynamicTableFactory.DynamicTableSourceMock) source;
        DeserializationSchema<RowData> decoder = mock.valueFormat.createRuntimeDecoder(
                ScanRuntimeProviderContext.INSTANCE, schema.toPhysicalRowDataType());
        assertThat(decoder.getProducedType().toString()).contains("namespace", "op");

        Map<String, String> noUrl = new java.util.HashMap<>(options);
        noUrl.remove("tally-avro.url");
        assertThatThrownBy(() -> FactoryMocks.createTableSource(schema, noUrl)).hasStackTraceContaining("url");
        Map<String, String> unknown = new java.util.HashMap<>(options);
        unknown.put("tally-avro.schema-id", "3");
        assertThatThrownBy(() -> FactoryMocks.createTableSource(schema, unknown))
                .hasStackTraceContaining("schema-id");
    }

    @Test
    void keysSplitIntoTheirIdsAtTheFirstSlashes() {
        RowType rowType = (RowType) DataTypes.ROW(
                        DataTypes.FIELD("namespace", DataTypes.STRING()),
                        DataTypes.FIELD("counter", DataTypes.STRING()))
                .getLogicalType();
        TallyKeyFormatFactory.Decoder decoder = new TallyKeyFormatFactory.Decoder(2, InternalTypeInfo.of(rowType));
        RowData key = decoder.deserialize("sched.switchout/host/c1/other_container".getBytes());
        assertThat(key.getString(0).toString()).isEqualTo("sched.switchout");
        assertThat(key.getString(1).toString()).isEqualTo("host/c1/other_container");
        assertThat(new String(new TallyKeyFormatFactory.Encoder(2).serialize(key)))
                .isEqualTo("sched.switchout/host/c1/other_container");
    }

    private static GenericRecord record(Schema schema) {
        GenericRecord tag =
                new GenericData.Record(schema.getField("tags").schema().getElementType());
        tag.put("key", "k");
        tag.put("value", ByteBuffer.wrap(new byte[] {1, 2}));
        GenericRecord r = new GenericData.Record(schema);
        r.put("namespace", "video_views");
        r.put("op", new GenericData.EnumSymbol(schema.getField("op").schema(), "CLEAR"));
        r.put("event_time", MICROS);
        r.put("tags", List.of(tag));
        return r;
    }

    private static byte[] confluent(int id, Schema schema, GenericRecord record) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.write(0);
        out.write(ByteBuffer.allocate(4).putInt(id).array());
        BinaryEncoder enc = EncoderFactory.get().binaryEncoder(out, null);
        new GenericDatumWriter<GenericRecord>(schema).write(record, enc);
        enc.flush();
        return out.toByteArray();
    }

    private static DeserializationSchema<RowData> open(DeserializationSchema<RowData> d) throws Exception {
        d.open(null);
        return d;
    }
}
