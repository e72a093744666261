package io.tally.registry;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The registry's settings: declared once with a default and a description; each can be set
 * by an environment variable or a {@code --name=value} flag (flags win).
 */
public final class RegistryConfig {
    /** One setting. */
    public record Field(String name, String env, String defaultValue, String description) {}

    public static final Field HOST = new Field("host", "TALLY_REGISTRY_HOST", "127.0.0.1", "Address the HTTP API binds to.");
    public static final Field PORT = new Field("port", "TALLY_REGISTRY_PORT", "8085", "HTTP port (Flink has 8081).");
    public static final Field BOOTSTRAP = new Field("kafka.bootstrap", "TALLY_KAFKA_BOOTSTRAP", "127.0.0.1:9092", "Kafka bootstrap servers.");
    public static final Field TOPIC = new Field("topic", "TALLY_REGISTRY_TOPIC", "_schemas", "The compacted topic that stores every schema and config.");
    public static final Field DEFAULT_COMPATIBILITY = new Field("default.compatibility", "TALLY_REGISTRY_DEFAULT_COMPATIBILITY", "BACKWARD", "Global level until one is set.");
    public static final Field MAX_BODY_BYTES = new Field("max.body.bytes", "TALLY_REGISTRY_MAX_BODY_BYTES", "1048576", "Largest request body accepted (413 above).");
    public static final Field TIMEOUT_MS = new Field("timeout.ms", "TALLY_REGISTRY_TIMEOUT_MS", "10000", "How long a write waits for Kafka before 500/50001.");
    public static final Field[] ALL = {HOST, PORT, BOOTSTRAP, TOPIC, DEFAULT_COMPATIBILITY, MAX_BODY_BYTES, TIMEOUT_MS};

    private final Map<String, String> values = new LinkedHashMap<>();

    private RegistryConfig() {}

    public static RegistryConfig from(Map<String, String> env, String[] args) {
        RegistryConfig c = new RegistryConfig();
        for (Field f : ALL) {
            c.values.put(f.name(), env.getOrDefault(f.env(), f.defaultValue()));
        }
        for (String arg : args) {
            if (!arg.startsWith("--") || !arg.contains("=")) {
                throw new IllegalArgumentException("expected --name=value, got " + arg + "\n" + usage());
            }
            String name = arg.substring(2, arg.indexOf('='));
            if (!c.values.containsKey(name)) {
                throw new IllegalArgumentException("unknown setting --" + name + "\n" + usage());
            }
            c.values.put(name, arg.substring(arg.indexOf('=') + 1));
        }
        c.port();
        c.maxBodyBytes();
        c.timeoutMs();
        c.defaultCompatibility();
        return c;
    }

    public static String usage() {
        StringBuilder sb = new StringBuilder("settings (flag / environment, default):\n");
        for (Field f : ALL) {
            sb.append(String.format("  --%-22s %-38s %-16s %s%n", f.name(), f.env(), f.defaultValue(), f.description()));
        }
        return sb.toString();
    }

    public String get(Field f) {
        return values.get(f.name());
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
        try {
            int v = Integer.parseInt(get(f));
            if (v < min || v > max) {
                throw new IllegalArgumentException(f.name() + "=" + v + " is outside " + min + ".." + max);
            }
            return v;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(f.name() + "=" + get(f) + " is not a whole number");
        }
    }
}
