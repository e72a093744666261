package io.tally.registry;

import io.tally.common.KafkaClientSecurity;
import io.tally.common.ServiceSettings;
import io.tally.common.ServiceSettings.Field;
import io.tally.model.Topics;
import java.util.List;
import java.util.Map;

/**
 * The registry's settings, declared once with defaults and descriptions ({@link ServiceSettings}:
 * environment variable or {@code --name=value} flag, flags win).
 */
public final class RegistryConfig {
    public static final Field HOST =
            new Field("host", "TALLY_REGISTRY_HOST", "127.0.0.1", "Address the HTTP API binds to.");
    public static final Field PORT = new Field("port", "TALLY_REGISTRY_PORT", "8085", "HTTP port (Flink has 8081).");
    public static final Field BOOTSTRAP =
            new Field("kafka.bootstrap", "TALLY_KAFKA_BOOTSTRAP", "127.0.0.1:9092", "Kafka bootstrap servers.");
    public static final Field TOPIC = new Field(
            "topic",
            "TALLY_REGISTRY_TOPIC",
            Topics.SCHEMAS,
            "The compacted topic that stores every schema and config.");
    public static final Field DEFAULT_COMPATIBILITY = new Field(
            "default.compatibility",
            "TALLY_REGISTRY_DEFAULT_COMPATIBILITY",
            "BACKWARD",
            "Global level until one is set.");
    public static final Field MAX_BODY_BYTES = new Field(
            "max.body.bytes", "TALLY_REGISTRY_MAX_BODY_BYTES", "1048576", "Largest request body accepted (413 above).");
    public static final Field TIMEOUT_MS = new Field(
            "timeout.ms", "TALLY_REGISTRY_TIMEOUT_MS", "10000", "How long a write waits for Kafka before 500/50001.");
    public static final Field ADMIN_TOKEN = new Field(
            "admin.token",
            "TALLY_REGISTRY_ADMIN_TOKEN",
            "",
            "Token every write and delete requires (Bearer, or the password of HTTP Basic as Confluent clients send"
                    + " it); reads and lookups stay open. Empty = every write refused with 401 unless admin.open"
                    + " (./tally up always sets one).");
    public static final Field ADMIN_OPEN = new Field(
            "admin.open",
            "TALLY_REGISTRY_ADMIN_OPEN",
            "false",
            "true: with no admin token, leave writes and deletes open to anyone who reaches the port.");
    /** The registry's own settings and Kafka's client security. */
    public static final Field[] ALL = java.util.stream.Stream.concat(
                    java.util.stream.Stream.of(
                            HOST,
                            PORT,
                            BOOTSTRAP,
                            TOPIC,
                            DEFAULT_COMPATIBILITY,
                            MAX_BODY_BYTES,
                            TIMEOUT_MS,
                            ADMIN_TOKEN,
                            ADMIN_OPEN),
                    KafkaClientSecurity.FIELDS.stream())
            .toArray(Field[]::new);

    private final ServiceSettings settings;
    private final KafkaClientSecurity kafkaSecurity;

    private RegistryConfig(ServiceSettings settings) {
        this.settings = settings;
        this.kafkaSecurity = KafkaClientSecurity.from(settings);
    }

    /** New properties for one Kafka client of the registry: the bootstrap servers and the security settings. */
    public java.util.Properties kafkaClient() {
        return kafkaSecurity.client(get(BOOTSTRAP));
    }

    public KafkaClientSecurity kafkaSecurity() {
        return kafkaSecurity;
    }

    public static RegistryConfig from(Map<String, String> env, String[] args) {
        RegistryConfig c = new RegistryConfig(ServiceSettings.from(List.of(ALL), env, args));
        c.port();
        c.maxBodyBytes();
        c.timeoutMs();
        c.defaultCompatibility();
        c.adminToken();
        return c;
    }

    public static String usage() {
        return ServiceSettings.usage(List.of(ALL));
    }

    public String get(Field f) {
        return settings.get(f);
    }

    public io.tally.common.AdminToken adminToken() {
        return settings.adminToken(ADMIN_TOKEN, ADMIN_OPEN);
    }

    public String host() {
        return get(HOST);
    }

    public int port() {
        return intIn(PORT, 1, 65535);
    }

    public int maxBodyBytes() {
        return intIn(MAX_BODY_BYTES, 1024, 64 * 1024 * 1024);
    }

    public long timeoutMs() {
        return intIn(TIMEOUT_MS, 100, 600_000);
    }

    public CompatibilityLevel defaultCompatibility() {
        return CompatibilityLevel.valueOf(get(DEFAULT_COMPATIBILITY).toUpperCase());
    }

    private int intIn(Field f, int min, int max) {
        return settings.intIn(f, min, max);
    }
}
