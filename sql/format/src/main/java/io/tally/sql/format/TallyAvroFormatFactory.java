package io.tally.sql.format;

import io.tally.serde.RestSchemaRegistryClient;
import io.tally.serde.SchemaRegistryClient;
import java.time.Duration;
import java.util.Set;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericRecord;
import org.apache.flink.api.common.serialization.DeserializationSchema;
import org.apache.flink.api.common.serialization.SerializationSchema;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ReadableConfig;
import org.apache.flink.formats.avro.AvroRowDataDeserializationSchema;
import org.apache.flink.formats.avro.AvroRowDataSerializationSchema;
import org.apache.flink.formats.avro.RegistryAvroDeserializationSchema;
import org.apache.flink.formats.avro.RegistryAvroSerializationSchema;
import org.apache.flink.formats.avro.SchemaCoder;
import org.apache.flink.table.api.ValidationException;
import org.apache.flink.table.connector.ChangelogMode;
import org.apache.flink.table.connector.Projection;
import org.apache.flink.table.connector.format.EncodingFormat;
import org.apache.flink.table.connector.format.ProjectableDecodingFormat;
import org.apache.flink.table.connector.sink.DynamicTableSink;
import org.apache.flink.table.connector.source.DynamicTableSource;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.factories.DeserializationFormatFactory;
import org.apache.flink.table.factories.DynamicTableFactory;
import org.apache.flink.table.factories.FactoryUtil;
import org.apache.flink.table.factories.SerializationFormatFactory;
import org.apache.flink.table.types.DataType;
import org.apache.flink.table.types.logical.RowType;

/**
 * The {@code tally-avro} table format: records in the Confluent wire format whose schemas live in
 * Tally's registry. Reads look each writer schema up by the id in the record (cached) and resolve
 * it to the table's columns by Avro's rules; writes encode with the subject's newest registered
 * schema. Built on flink-avro's registry hooks ({@link RegistryAvroDeserializationSchema},
 * {@link RegistryAvroSerializationSchema}, a {@link org.apache.flink.formats.avro.SchemaCoder})
 * and its RowData converters.
 */
public final class TallyAvroFormatFactory implements DeserializationFormatFactory, SerializationFormatFactory {
    public static final String IDENTIFIER = "tally-avro";

    @Override
    public String factoryIdentifier() {
        return IDENTIFIER;
    }

    @Override
    public Set<ConfigOption<?>> requiredOptions() {
        return Set.of(TallyAvroOptions.URL);
    }

    @Override
    public Set<ConfigOption<?>> optionalOptions() {
        return Set.of(TallyAvroOptions.SUBJECT, TallyAvroOptions.TOKEN, TallyAvroOptions.IGNORE_PARSE_ERRORS);
    }

    @Override
    public ProjectableDecodingFormat<DeserializationSchema<RowData>> createDecodingFormat(
            DynamicTableFactory.Context context, ReadableConfig options) {
        FactoryUtil.validateFactoryOptions(this, options);
        String url = options.get(TallyAvroOptions.URL);
        String subject = options.getOptional(TallyAvroOptions.SUBJECT).orElse(null);
        String token = options.getOptional(TallyAvroOptions.TOKEN).orElse(null);
        boolean skipBad = options.get(TallyAvroOptions.IGNORE_PARSE_ERRORS);
        return new ProjectableDecodingFormat<>() {
            @Override
            public DeserializationSchema<RowData> createRuntimeDecoder(
                    DynamicTableSource.Context ctx, DataType physicalType, int[][] projections) {
                DataType produced = Projection.of(projections).project(physicalType);
                RowType rowType = (RowType) produced.getLogicalType();
                TypeInformation<RowData> info = ctx.createTypeInformation(produced);
                Schema subjectSchema =
                        subject == null ? null : newest(url, subject, token).schema();
                Schema reader = ReaderSchemas.forColumns(subjectSchema, rowType, subject);
                DeserializationSchema<RowData> decoder =
                        decoder(rowType, info, reader, new RegistrySchemaCoder.Provider(url, subject, token));
                return skipBad ? new SkippingDecoder(decoder) : decoder;
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
        FactoryUtil.validateFactoryOptions(this, options);
        String url = options.get(TallyAvroOptions.URL);
        String subject = options.getOptional(TallyAvroOptions.SUBJECT)
                .orElseThrow(
                        () -> new ValidationException(
                                "tally-avro writes need 'subject' (the registry subject whose newest schema encodes the rows)"));
        String token = options.getOptional(TallyAvroOptions.TOKEN).orElse(null);
        return new EncodingFormat<>() {
            @Override
            public SerializationSchema<RowData> createRuntimeEncoder(
                    DynamicTableSink.Context ctx, DataType physicalType) {
                RowType rowType = (RowType) physicalType.getLogicalType();
                Schema writer = newest(url, subject, token).schema();
                ReaderSchemas.checkWritable(writer, rowType, subject);
                return encoder(rowType, writer, new RegistrySchemaCoder.Provider(url, subject, token));
            }

            @Override
            public ChangelogMode getChangelogMode() {
                return ChangelogMode.insertOnly();
            }
        };
    }

    static DeserializationSchema<RowData> decoder(
            RowType rowType, TypeInformation<RowData> info, Schema reader, SchemaCoder.SchemaCoderProvider coder) {
        return new AvroRowDataDeserializationSchema(
                new RegistryAvroDeserializationSchema<>(GenericRecord.class, reader, coder),
                TallyAvroConverters.reader(rowType),
                info);
    }

    static SerializationSchema<RowData> encoder(RowType rowType, Schema writer, SchemaCoder.SchemaCoderProvider coder) {
        return new AvroRowDataSerializationSchema(
                rowType,
                RegistryAvroSerializationSchema.forGeneric(writer, coder),
                TallyAvroConverters.writer(rowType));
    }

    /** The subject's newest version, asked of the registry while the statement is planned. */
    private static SchemaRegistryClient.Registered newest(String url, String subject, String token) {
        SchemaRegistryClient registry = new RestSchemaRegistryClient(url, Duration.ofSeconds(10), token);
        try {
            return registry.latest(subject);
        } catch (RuntimeException e) {
            throw new ValidationException(
                    "tally-avro: subject '" + subject + "' is not readable from the registry at " + url + ": "
                            + e.getMessage(),
                    e);
        }
    }
}
