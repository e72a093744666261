package io.tally.sql.format;

import java.nio.charset.StandardCharsets;
import java.util.Set;
import org.apache.flink.api.common.serialization.DeserializationSchema;
import org.apache.flink.api.common.serialization.SerializationSchema;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ReadableConfig;
import org.apache.flink.table.api.ValidationException;
import org.apache.flink.table.connector.ChangelogMode;
import org.apache.flink.table.connector.format.DecodingFormat;
import org.apache.flink.table.connector.format.EncodingFormat;
import org.apache.flink.table.connector.sink.DynamicTableSink;
import org.apache.flink.table.connector.source.DynamicTableSource;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.factories.DeserializationFormatFactory;
import org.apache.flink.table.factories.DynamicTableFactory;
import org.apache.flink.table.factories.SerializationFormatFactory;
import org.apache.flink.table.types.DataType;
import org.apache.flink.table.types.logical.LogicalTypeFamily;
import org.apache.flink.table.types.logical.RowType;

/**
 * The {@code tally-key} format: the record keys of Tally's topics, ids joined with '/'
 * ({@code namespace/counter}), as key columns, so an upsert table's primary key is
 * (namespace, counter). A key of n columns is split at its first n-1 slashes: a namespace never
 * holds one, the last id may (a sched.switchout counter is {@code host/container/cause}).
 */
public final class TallyKeyFormatFactory implements DeserializationFormatFactory, SerializationFormatFactory {
    public static final String IDENTIFIER = "tally-key";

    @Override
    public String factoryIdentifier() {
        return IDENTIFIER;
    }

    @Override
    public Set<ConfigOption<?>> requiredOptions() {
        return Set.of();
    }

    @Override
    public Set<ConfigOption<?>> optionalOptions() {
        return Set.of();
    }

    @Override
    public DecodingFormat<DeserializationSchema<RowData>> createDecodingFormat(
            DynamicTableFactory.Context context, ReadableConfig options) {
        return new DecodingFormat<>() {
            @Override
            public DeserializationSchema<RowData> createRuntimeDecoder(DynamicTableSource.Context ctx, DataType type) {
                return new Decoder(columns(type), ctx.createTypeInformation(type));
            }

            @Override
            public ChangelogMode getChangelogMode() {
                return ChangelogMode.insertOnly();
            }
        };
    }

    @Override
    public EncodingFormat<SerializationSchema<RowData>> createEncodingFormat(
            DynamicTableFactory.Context context, ReadableConfig options) {
        return new EncodingFormat<>() {
            @Override
            public SerializationSchema<RowData> createRuntimeEncoder(DynamicTableSink.Context ctx, DataType type) {
                return new Encoder(columns(type));
            }

            @Override
            public ChangelogMode getChangelogMode() {
                return ChangelogMode.insertOnly();
            }
        };
    }

    private static int columns(DataType type) {
        RowType row = (RowType) type.getLogicalType();
        row.getFields().forEach(f -> {
            if (!f.getType().is(LogicalTypeFamily.CHARACTER_STRING)) {
                throw new ValidationException("tally-key columns are strings; '" + f.getName() + "' is " + f.getType());
            }
        });
        return row.getFieldCount();
    }

    /** Splits a key into its ids. */
    static final class Decoder implements DeserializationSchema<RowData> {
        private final int columns;
        private final TypeInformation<RowData> type;

        Decoder(int columns, TypeInformation<RowData> type) {
            this.columns = columns;
            this.type = type;
        }

        @Override
        public RowData deserialize(byte[] key) {
            if (key == null) {
                return null;
            }
            String[] parts = new String(key, StandardCharsets.UTF_8).split("/", columns);
            GenericRowData row = new GenericRowData(columns);
            for (int i = 0; i < columns; i++) {
                row.setField(i, i < parts.length ? StringData.fromString(parts[i]) : null);
            }
            return row;
        }

        @Override
        public boolean isEndOfStream(RowData next) {
            return false;
        }

        @Override
        public TypeInformation<RowData> getProducedType() {
            return type;
        }
    }

    /** Joins the key columns with '/'. */
    static final class Encoder implements SerializationSchema<RowData> {
        private final int columns;

        Encoder(int columns) {
            this.columns = columns;
        }

        @Override
        public byte[] serialize(RowData row) {
            StringBuilder key = new StringBuilder();
            for (int i = 0; i < columns; i++) {
                if (row.isNullAt(i)) {
                    throw new IllegalArgumentException("tally-key column " + i + " is null");
                }
                key.append(i > 0 ? "/" : "").append(row.getString(i));
            }
            return key.toString().getBytes(StandardCharsets.UTF_8);
        }
    }
}
