package io.tally.sql.catalog;

import io.tally.model.TallySchemas;
import io.tally.model.Topics;
import io.tally.sql.format.TallyAvroFormatFactory;
import io.tally.sql.format.TallyKeyFormatFactory;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.avro.LogicalTypes;
import org.apache.avro.Schema;
import org.apache.flink.formats.avro.typeutils.AvroSchemaConverter;
import org.apache.flink.table.api.DataTypes;
import org.apache.flink.table.catalog.CatalogTable;
import org.apache.flink.table.types.DataType;
import org.apache.flink.table.types.FieldsDataType;

/**
 * Tally's topics as Flink SQL tables, made from the model (no second list): one table per topic
 * of {@link Topics#ALL} whose values have one of Tally's schemas, named by the topic's id, its
 * comment the topic's doc, its columns the Avro fields (types by flink-avro's mapping,
 * timestamp-micros as TIMESTAMP(6) in UTC). Each also has the Kafka record's timestamp, partition
 * and offset as metadata columns and a watermark on its event time. A compacted topic is an
 * upsert table keyed by its key fields (the latest record per key); the others are append-only
 * logs whose record key is written from the key fields on INSERT.
 */
public final class TallyTables {
    /** Where Kafka's classes are in this jar (relocated when shaded): this class's own reference, resolved. */
    static final String KAFKA_PACKAGE = org.apache.kafka.clients.consumer.ConsumerConfig.class
            .getName()
            .replace("clients.consumer.ConsumerConfig", "");

    /** Kafka's own package as users write it, built at run time so the shading leaves it as it is. */
    private static final String KAFKA_AS_WRITTEN = String.join(".", "org", "apache", "kafka") + ".";

    /**
     * A client property naming Kafka's classes (a JAAS login module, a config provider) as users
     * write them, with the classes where this jar has them: the tables' Kafka client is shaded.
     */
    static String relocated(String value, String kafkaPackage) {
        if (kafkaPackage.equals(KAFKA_AS_WRITTEN) || value.contains(kafkaPackage)) {
            return value;
        }
        return value.replace(KAFKA_AS_WRITTEN, kafkaPackage);
    }

    /** The time attribute every table has: its event time at millisecond precision. */
    public static final String ROWTIME = "rowtime";

    private final String bootstrapServers;
    private final String registryUrl;
    private final String registryToken;
    private final Map<String, String> kafkaProperties;

    public TallyTables(String bootstrapServers, String registryUrl, String registryToken) {
        this(bootstrapServers, registryUrl, registryToken, Map.of());
    }

    /** @param kafkaProperties {@code properties.*} options of every table (the clients' security) */
    public TallyTables(
            String bootstrapServers, String registryUrl, String registryToken, Map<String, String> kafkaProperties) {
        this.bootstrapServers = bootstrapServers;
        this.registryUrl = registryUrl;
        this.registryToken = registryToken;
        this.kafkaProperties = Map.copyOf(kafkaProperties);
    }

    /** The tables by name, in the order of {@link Topics#ALL}. */
    public Map<String, CatalogTable> all() {
        Map<String, CatalogTable> tables = new LinkedHashMap<>();
        for (Topics.Spec spec : Topics.ALL) {
            if (spec.valueSchema() != null) {
                tables.put(spec.id(), table(spec));
            }
        }
        return tables;
    }

    CatalogTable table(Topics.Spec spec) {
        Schema avro = TallySchemas.ALL.get(spec.valueSchema());
        boolean upsert = "compact".equals(spec.config().get("cleanup.policy"));
        org.apache.flink.table.api.Schema.Builder columns = org.apache.flink.table.api.Schema.newBuilder();
        FieldsDataType row = (FieldsDataType) AvroSchemaConverter.convertToDataType(avro.toString());
        List<String> names = DataType.getFieldNames(row);
        List<DataType> types = DataType.getFieldDataTypes(row);
        for (int i = 0; i < names.size(); i++) {
            DataType type = types.get(i);
            // a key column must be NOT NULL; the others read as flink-avro maps them
            columns.column(names.get(i), spec.keyFields().contains(names.get(i)) ? type.notNull() : type);
        }
        if (!upsert) { // upsert-kafka has no record metadata but the timestamp
            columns.columnByMetadata("kafka_partition", DataTypes.INT(), "partition", true);
            columns.columnByMetadata("kafka_offset", DataTypes.BIGINT(), "offset", true);
        }
        columns.columnByMetadata("kafka_timestamp", DataTypes.TIMESTAMP_LTZ(3), "timestamp", true);
        String time = eventTime(avro);
        columns.columnByExpression(ROWTIME, "CAST(`" + time + "` AS TIMESTAMP(3))");
        columns.watermark(ROWTIME, "`" + ROWTIME + "` - INTERVAL '5' SECOND");
        if (upsert) {
            columns.primaryKey(spec.keyFields());
        }
        return CatalogTable.newBuilder()
                .schema(columns.build())
                .comment(spec.doc() + " (topic " + spec.name() + ", Avro " + avro.getFullName() + "; " + ROWTIME + " = "
                        + time + ")")
                .options(options(spec, upsert))
                .build();
    }

    private Map<String, String> options(Topics.Spec spec, boolean upsert) {
        Map<String, String> o = new LinkedHashMap<>();
        o.put("connector", upsert ? "upsert-kafka" : "kafka");
        o.put("topic", spec.name());
        o.put("properties.bootstrap.servers", bootstrapServers);
        kafkaProperties.forEach((k, v) -> o.put(k, relocated(v, KAFKA_PACKAGE)));
        if (!upsert) {
            o.put("scan.startup.mode", "earliest-offset");
        }
        o.put("value.format", TallyAvroFormatFactory.IDENTIFIER);
        o.put("value.tally-avro.url", registryUrl);
        o.put("value.tally-avro.subject", spec.name() + "-value");
        // what the jobs could not decode they dead-lettered (dead_letters has it): skip it here
        o.put("value.tally-avro.ignore-parse-errors", "true");
        if (registryToken != null && !registryToken.isEmpty()) {
            o.put("value.tally-avro.token", registryToken);
        }
        if (!spec.keyFields().isEmpty()) {
            o.put("key.format", TallyKeyFormatFactory.IDENTIFIER);
            if (!upsert) { // upsert-kafka's key is its primary key
                o.put("key.fields", String.join(";", spec.keyFields()));
            }
            o.put("value.fields-include", "ALL");
        }
        return o;
    }

    /** The field named event_time, else the schema's first timestamp field. */
    static String eventTime(Schema avro) {
        List<String> timestamps = new ArrayList<>();
        for (Schema.Field f : avro.getFields()) {
            if (f.schema().getLogicalType() instanceof LogicalTypes.TimestampMicros
                    || f.schema().getLogicalType() instanceof LogicalTypes.TimestampMillis) {
                timestamps.add(f.name());
            }
        }
        if (timestamps.isEmpty()) {
            throw new IllegalStateException(avro.getFullName() + " has no timestamp field for a watermark");
        }
        return timestamps.contains("event_time") ? "event_time" : timestamps.get(0);
    }
}
