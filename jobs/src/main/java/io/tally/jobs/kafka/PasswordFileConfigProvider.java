package io.tally.jobs.kafka;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.common.config.ConfigData;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.config.provider.ConfigProvider;

/**
 * A Kafka config provider that reads a password file's first line where the client starts:
 * {@code ${tally-password:/run/secrets/kafka:password}}. The jobs' Kafka clients name the file, not
 * the password, so the password is in no job graph, argument or checkpoint, only on the hosts that
 * run the job. (Kafka's own FileConfigProvider reads a properties file, DirectoryConfigProvider a
 * whole file with its newline; password files hold one line.)
 */
public final class PasswordFileConfigProvider implements ConfigProvider {
    /** The provider's name in {@code config.providers} and in references. */
    public static final String NAME = "tally-password";

    @Override
    public void configure(Map<String, ?> configs) {}

    @Override
    public ConfigData get(String path) {
        return get(path, Set.of("password"));
    }

    @Override
    public ConfigData get(String path, Set<String> keys) {
        Map<String, String> data = new HashMap<>();
        String line;
        try {
            List<String> lines = Files.readAllLines(Path.of(path));
            line = lines.isEmpty() ? "" : lines.get(0).strip();
        } catch (IOException e) {
            throw new ConfigException("the Kafka password file " + path + " cannot be read: " + e.getMessage());
        }
        if (line.isEmpty()) {
            throw new ConfigException("the Kafka password file " + path + " is empty");
        }
        for (String key : keys) {
            data.put(key, line);
        }
        return new ConfigData(data);
    }

    @Override
    public void close() {}

    /** The client properties that make a provider of this class known to a Kafka client. */
    public static Map<String, String> declared() {
        return Map.of(
                "config.providers",
                NAME,
                "config.providers." + NAME + ".class",
                PasswordFileConfigProvider.class.getName());
    }

    /** A reference to the password in `file`, resolved by the client that reads it. */
    public static String reference(String file) {
        return "${" + NAME + ":" + file + ":password}";
    }
}
