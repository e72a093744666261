package io.tally.sql.format;

import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.List;
import org.apache.avro.LogicalTypes;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.apache.flink.formats.avro.AvroToRowDataConverters;
import org.apache.flink.formats.avro.RowDataToAvroConverters;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.TimestampData;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.LogicalTypeFamily;
import org.apache.flink.table.types.logical.LogicalTypeRoot;
import org.apache.flink.table.types.logical.RowType;

/**
 * flink-avro's Avro ⇄ RowData converters with the two things Tally's schemas need and they lack:
 * a {@code timestamp-micros} long is read as epoch milliseconds by flink-avro 1.20 (a date 1000
 * times too far) and written as milliseconds, so it is converted here, keeping the microseconds
 * (TIMESTAMP(6), UTC); and a STRING column whose Avro field is an enum is written as the enum's
 * symbol (Avro's writer refuses a string there). Everything else is flink-avro's.
 */
final class TallyAvroConverters {
    private TallyAvroConverters() {}

    static AvroToRowDataConverters.AvroToRowDataConverter reader(RowType rowType) {
        return new Reader(AvroToRowDataConverters.createRowConverter(rowType));
    }

    static RowDataToAvroConverters.RowDataToAvroConverter writer(RowType rowType) {
        return new Writer(RowDataToAvroConverters.createConverter(rowType), rowType);
    }

    // Classes, not lambdas: a lambda of this (user-code) jar held by flink-avro's (parent-loaded)
    // schema does not deserialize in the JobManager ("cannot assign SerializedLambda").
    private static final class Reader implements AvroToRowDataConverters.AvroToRowDataConverter {
        private final AvroToRowDataConverters.AvroToRowDataConverter base;

        Reader(AvroToRowDataConverters.AvroToRowDataConverter base) {
            this.base = base;
        }

        @Override
        public Object convert(Object record) {
            return base.convert(microsAsLocalTime((GenericRecord) record));
        }
    }

    private static final class Writer implements RowDataToAvroConverters.RowDataToAvroConverter {
        private final RowDataToAvroConverters.RowDataToAvroConverter base;
        private final RowType rowType;

        Writer(RowDataToAvroConverters.RowDataToAvroConverter base, RowType rowType) {
            this.base = base;
            this.rowType = rowType;
        }

        @Override
        public Object convert(Schema schema, Object object) {
            GenericRecord record = (GenericRecord) base.convert(schema, object);
            RowData row = (RowData) object;
            List<LogicalType> types = rowType.getChildren();
            List<Schema.Field> fields = schema.getFields();
            for (int i = 0; i < fields.size(); i++) {
                Schema field = nonNull(fields.get(i).schema());
                if (row.isNullAt(i)) {
                    continue;
                }
                if (field.getType() == Schema.Type.ENUM) {
                    record.put(
                            i,
                            new GenericData.EnumSymbol(field, row.getString(i).toString()));
                } else if (isMicros(field) && types.get(i).is(LogicalTypeFamily.TIMESTAMP)) {
                    record.put(i, micros(row.getTimestamp(i, precision(types.get(i)))));
                }
            }
            return record;
        }
    }

    /** Replaces every timestamp-micros long of the record (nested records and arrays too) by its UTC LocalDateTime. */
    static GenericRecord microsAsLocalTime(GenericRecord record) {
        for (Schema.Field f : record.getSchema().getFields()) {
            Object v = record.get(f.pos());
            Object fixed = fix(nonNull(f.schema()), v);
            if (fixed != v) {
                record.put(f.pos(), fixed);
            }
        }
        return record;
    }

    private static Object fix(Schema schema, Object v) {
        if (v instanceof Long micros && isMicros(schema)) {
            return LocalDateTime.ofInstant(
                    Instant.ofEpochSecond(Math.floorDiv(micros, 1_000_000L), Math.floorMod(micros, 1_000_000L) * 1000),
                    ZoneOffset.UTC);
        }
        if (v instanceof GenericRecord r) {
            return microsAsLocalTime(r);
        }
        if (v instanceof List<?> list && schema.getType() == Schema.Type.ARRAY) {
            Schema element = nonNull(schema.getElementType());
            @SuppressWarnings("unchecked")
            List<Object> items = (List<Object>) list;
            for (int i = 0; i < items.size(); i++) {
                items.set(i, fix(element, items.get(i)));
            }
        }
        return v;
    }

    static long micros(TimestampData ts) {
        return Math.multiplyExact(ts.getMillisecond(), 1000L) + ts.getNanoOfMillisecond() / 1000;
    }

    private static boolean isMicros(Schema s) {
        return s.getType() == Schema.Type.LONG && s.getLogicalType() instanceof LogicalTypes.TimestampMicros;
    }

    private static int precision(LogicalType t) {
        return t.is(LogicalTypeRoot.TIMESTAMP_WITH_LOCAL_TIME_ZONE)
                ? ((org.apache.flink.table.types.logical.LocalZonedTimestampType) t).getPrecision()
                : ((org.apache.flink.table.types.logical.TimestampType) t).getPrecision();
    }

    /** The schema itself, or the one non-null branch of a ["null", T] union. */
    static Schema nonNull(Schema s) {
        if (s.getType() != Schema.Type.UNION) {
            return s;
        }
        Schema only = null;
        for (Schema b : s.getTypes()) {
            if (b.getType() != Schema.Type.NULL) {
                if (only != null) {
                    return s;
                }
                only = b;
            }
        }
        return only == null ? s : only;
    }
}
