package io.tally.sql.catalog;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tally.model.Topics;
import java.util.Map;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.TableEnvironment;
import org.apache.flink.table.catalog.Catalog;
import org.apache.flink.table.catalog.Column;
import org.apache.flink.table.catalog.ResolvedSchema;
import org.apache.flink.table.catalog.UniqueConstraint;
import org.apache.flink.table.factories.FactoryUtil;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class TallyCatalogTest {
    private static TableEnvironment sql;

    @BeforeAll
    static void catalog() {
        sql = TableEnvironment.create(EnvironmentSettings.inStreamingMode());
        Catalog tally = FactoryUtil.createCatalog(
                "tally",
                Map.of("type", "tally", "bootstrap-servers", "127.0.0.1:9", "registry-url", "http://127.0.0.1:9"),
                new Configuration(),
                TallyCatalogTest.class.getClassLoader());
        sql.registerCatalog("tally", tally);
        sql.useCatalog("tally");
    }

    @Test
    void everyTopicWithATallySchemaIsATableNamedByItsId() {
        assertThat(sql.listTables())
                .containsExactlyInAnyOrder(
                        "counter_events", "timeseries_events", "dead_letters", "counter_rollups", "alerts");
        assertThat(Topics.ALL.stream().filter(t -> t.valueSchema() != null).map(Topics.Spec::id))
                .containsExactlyInAnyOrder(sql.listTables());
    }

    @Test
    void aLogTableHasTheAvroFieldsKafkaMetadataAndAWatermarkOnEventTime() {
        ResolvedSchema s = sql.from("timeseries_events").getResolvedSchema();
        assertThat(s.getColumnNames())
                .containsExactly(
                        "namespace",
                        "time_series_id",
                        "event_time",
                        "event_id",
                        "items",
                        "source",
                        "kafka_partition",
                        "kafka_offset",
                        "kafka_timestamp",
                        "rowtime");
        assertThat(s.getColumn("event_time").orElseThrow().getDataType().toString())
                .isEqualTo("TIMESTAMP(6) NOT NULL");
        assertThat(s.getColumn("items").orElseThrow().getDataType().toString())
                .isEqualTo("ARRAY<ROW<`key` STRING NOT NULL, `value` BYTES NOT NULL> NOT NULL> NOT NULL");
        assertThat(s.getColumn("kafka_timestamp").orElseThrow()).isInstanceOf(Column.MetadataColumn.class);
        assertThat(s.getWatermarkSpecs()).singleElement().satisfies(w -> {
            assertThat(w.getRowtimeAttribute()).isEqualTo("rowtime");
            assertThat(w.getWatermarkExpression().asSummaryString()).contains("5");
        });
        assertThat(s.getPrimaryKey()).isEmpty();
    }

    @Test
    void theCompactedRollupTopicIsAnUpsertTableKeyedByNamespaceAndCounter() {
        ResolvedSchema s = sql.from("counter_rollups").getResolvedSchema();
        assertThat(s.getPrimaryKey().map(UniqueConstraint::getColumns))
                .contains(java.util.List.of("namespace", "counter"));
        assertThat(s.getColumnNames()).startsWith("namespace", "counter", "count", "rollup_time");
        assertThat(sql.from("dead_letters")
                        .getResolvedSchema()
                        .getWatermarkSpecs()
                        .get(0)
                        .getRowtimeAttribute())
                .isEqualTo("rowtime");
        assertThat(TallyTables.eventTime(io.tally.model.TallySchemas.DEAD_LETTER))
                .isEqualTo("failed_at");
    }

    @Test
    void everyTablesOptionsAreOnesItsConnectorAndFormatsAccept() {
        // planning a scan validates the connector's and the formats' options; the last step, the
        // value decoder, asks the registry for the subject, which this unit test has none of
        for (String table : sql.listTables()) {
            assertThatThrownBy(() -> sql.explainSql("SELECT * FROM " + table))
                    .hasMessageContaining("subject '")
                    .hasMessageContaining("is not readable from the registry at http://127.0.0.1:9");
        }
    }

    @Test
    void eachTableSaysWhatItHolds() throws Exception {
        var table = sql.getCatalog("tally")
                .orElseThrow()
                .getTable(new org.apache.flink.table.catalog.ObjectPath("default_database", "counter_events"));
        assertThat(table.getComment()).contains("counter mutations", "tally.counter.events");
        assertThat(table.getOptions())
                .containsEntry("value.format", "tally-avro")
                .containsEntry("value.tally-avro.subject", "tally.counter.events-value")
                .containsEntry("key.format", "tally-key")
                .containsEntry("key.fields", "namespace;counter");
    }

    @Test
    void kafkaPropertiesOfTheCatalogReachEveryTableAndOthersAreRefused() {
        Catalog secured = FactoryUtil.createCatalog(
                "secured",
                Map.of(
                        "type", "tally",
                        "properties.security.protocol", "SASL_SSL",
                        "properties.sasl.jaas.config", "x required password=\"${file:/s/kafka.properties:password}\";"),
                new Configuration(),
                TallyCatalogTest.class.getClassLoader());
        sql.registerCatalog("secured", secured);
        String ddl = sql.executeSql("SHOW CREATE TABLE secured.default_database.counter_rollups")
                .collect()
                .next()
                .getField(0)
                .toString();
        assertThat(ddl)
                .contains("'properties.security.protocol' = 'SASL_SSL'")
                .contains("${file:/s/kafka.properties:password}");
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> FactoryUtil.createCatalog(
                        "typo",
                        Map.of("type", "tally", "bootstrap-server", "x:1"),
                        new Configuration(),
                        TallyCatalogTest.class.getClassLoader()))
                .hasMessageContaining("bootstrap-server");
    }

    @Test
    void kafkaClassNamesInClientPropertiesFollowTheShadedClient() {
        String jaas = "org.apache.kafka.common.security.scram.ScramLoginModule required username=\"u\";";
        assertThat(TallyTables.relocated(jaas, "x.shaded.org.apache.kafka."))
                .isEqualTo("x.shaded.org.apache.kafka.common.security.scram.ScramLoginModule required username=\"u\";");
        assertThat(TallyTables.relocated("x.shaded.org.apache.kafka.A", "x.shaded.org.apache.kafka."))
                .isEqualTo("x.shaded.org.apache.kafka.A");
        assertThat(TallyTables.relocated(jaas, "org.apache.kafka.")).isEqualTo(jaas);
    }
}
