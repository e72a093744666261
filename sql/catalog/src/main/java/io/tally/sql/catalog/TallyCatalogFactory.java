package io.tally.sql.catalog;

import java.util.Set;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ConfigOptions;
import org.apache.flink.table.catalog.Catalog;
import org.apache.flink.table.factories.CatalogFactory;
import org.apache.flink.table.factories.FactoryUtil;

/**
 * Makes the {@code tally} catalog ({@code 'type' = 'tally'}) from where Tally's Kafka and registry
 * are. Options {@code properties.*} go to every table's Kafka clients as the Kafka connector's own
 * {@code properties.*} do: how they authenticate and check the brokers (a password as a
 * config-provider reference, so {@code SHOW CREATE TABLE} shows no secret).
 */
public final class TallyCatalogFactory implements CatalogFactory {
    public static final String IDENTIFIER = "tally";

    public static final ConfigOption<String> BOOTSTRAP_SERVERS = ConfigOptions.key("bootstrap-servers")
            .stringType()
            .defaultValue("127.0.0.1:9092")
            .withDescription("Kafka brokers of Tally's topics.");

    public static final ConfigOption<String> REGISTRY_URL = ConfigOptions.key("registry-url")
            .stringType()
            .defaultValue("http://127.0.0.1:8085")
            .withDescription("Tally's schema registry, for the tables' tally-avro format.");

    public static final ConfigOption<String> REGISTRY_TOKEN = ConfigOptions.key("registry-token")
            .stringType()
            .noDefaultValue()
            .withDescription("The registry's token, given to the tables' format (writes).");

    /** The prefix of the Kafka client properties every table gets. */
    public static final String KAFKA_PROPERTIES = "properties.";

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
        return Set.of(BOOTSTRAP_SERVERS, REGISTRY_URL, REGISTRY_TOKEN);
    }

    @Override
    public Catalog createCatalog(Context context) {
        FactoryUtil.CatalogFactoryHelper helper = FactoryUtil.createCatalogFactoryHelper(this, context);
        helper.validateExcept(KAFKA_PROPERTIES);
        java.util.Map<String, String> kafka = new java.util.TreeMap<>();
        context.getOptions().forEach((k, v) -> {
            if (k.startsWith(KAFKA_PROPERTIES)) {
                kafka.put(k, v);
            }
        });
        return new TallyCatalog(
                context.getName(),
                new TallyTables(
                        helper.getOptions().get(BOOTSTRAP_SERVERS),
                        helper.getOptions().get(REGISTRY_URL),
                        helper.getOptions().getOptional(REGISTRY_TOKEN).orElse(null),
                        kafka));
    }
}
