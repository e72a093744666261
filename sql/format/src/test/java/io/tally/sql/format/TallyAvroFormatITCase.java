package io.tally.sql.format;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.model.TallySchemas;
import io.tally.model.Topics;
import io.tally.serde.WireFormat;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.api.common.serialization.DeserializationSchema;
import org.apache.flink.formats.avro.typeutils.AvroSchemaConverter;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.runtime.typeutils.InternalTypeInfo;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A Flink job on a MiniCluster decodes with tally-avro TimeSeriesEvents in the wire format as
 * Tally's serde frames them ({@link WireFormat}'s header, then Avro binary; the serde itself needs
 * Avro 1.12, the cluster's lib has 1.11), into the columns the catalog gives timeseries_events.
 * The same against the running stack, through the SQL gateway and records the gateway wrote:
 * infra/tests/integration/test_sql.py.
 */
class TallyAvroFormatITCase {
    @RegisterExtension
    static final MiniClusterExtension CLUSTER = new MiniClusterExtension(new MiniClusterResourceConfiguration.Builder()
            .setNumberTaskManagers(1)
            .setNumberSlotsPerTaskManager(2)
            .build());

    private static final String TOPIC = Topics.TIMESERIES_EVENTS;

    @Test
    void aJobDecodesWhatTheGatewaysSerdeWrote() throws Exception {
        int id = MemoryRegistry.SHARED.register(TOPIC + "-value", TallySchemas.TIME_SERIES_EVENT);
        List<byte[]> records = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            records.add(framed(id, event(i)));
        }
        records.add(new byte[] {7, 7, 7}); // not in the wire format: skipped, as the catalog's tables do

        List<String> decoded = StreamExecutionEnvironment.getExecutionEnvironment()
                .setParallelism(2)
                .fromData(records)
                .map(new Decode())
                .filter(s -> !s.isEmpty())
                .executeAndCollect(100);

        assertThat(decoded).hasSize(50);
        assertThat(decoded).contains("playback|ts-7|1764000000000007|e7|deviceType=dev7|gateway");
    }

    private static byte[] framed(int id, GenericRecord record) throws java.io.IOException {
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        out.write(new byte[WireFormat.HEADER_SIZE]);
        org.apache.avro.io.BinaryEncoder enc =
                org.apache.avro.io.EncoderFactory.get().binaryEncoder(out, null);
        new org.apache.avro.generic.GenericDatumWriter<GenericRecord>(record.getSchema()).write(record, enc);
        enc.flush();
        byte[] bytes = out.toByteArray();
        WireFormat.writeHeader(bytes, id);
        return bytes;
    }

    private static GenericRecord event(int i) {
        Schema schema = TallySchemas.TIME_SERIES_EVENT;
        GenericRecord item = new GenericData.Record(TallySchemas.EVENT_ITEM);
        item.put("key", "deviceType");
        item.put("value", ByteBuffer.wrap(("dev" + i).getBytes()));
        GenericRecord e = new GenericData.Record(schema);
        e.put("namespace", "playback");
        e.put("time_series_id", "ts-" + i);
        e.put("event_time", 1_764_000_000_000_000L + i);
        e.put("event_id", "e" + i);
        e.put("items", List.of(item));
        e.put("source", "gateway");
        return e;
    }

    /** The format's runtime decoder as the Kafka connector runs it, rows printed for the assertion. */
    static final class Decode extends RichMapFunction<byte[], String> {
        private transient DeserializationSchema<RowData> decoder;

        @Override
        public void open(OpenContext ctx) throws Exception {
            RowType columns = (RowType) AvroSchemaConverter.convertToDataType(TallySchemas.TIME_SERIES_EVENT.toString())
                    .getLogicalType();
            Schema reader = ReaderSchemas.forColumns(
                    MemoryRegistry.SHARED.latest(TOPIC + "-value").schema(), columns, TOPIC + "-value");
            decoder = new SkippingDecoder(TallyAvroFormatFactory.decoder(
                    columns,
                    InternalTypeInfo.of(columns),
                    reader,
                    () -> new RegistrySchemaCoder(MemoryRegistry.SHARED, TOPIC + "-value")));
            decoder.open(null);
        }

        @Override
        public String map(byte[] bytes) throws Exception {
            RowData row = decoder.deserialize(bytes);
            if (row == null) {
                return "";
            }
            RowData item = row.getArray(4).getRow(0, 2);
            return String.join(
                    "|",
                    row.getString(0).toString(),
                    row.getString(1).toString(),
                    Long.toString(TallyAvroConverters.micros(row.getTimestamp(2, 6))),
                    row.getString(3).toString(),
                    item.getString(0) + "=" + new String(item.getBinary(1)),
                    row.getString(5).toString());
        }
    }
}
