package io.tally.namespace;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collection;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The namespaces a service knows, by name. Loaded from a directory of {@code <name>.json}
 * files until the control plane (Postgres + Debezium) feeds it; {@link #put}/{@link #remove}
 * apply live changes.
 */
public final class NamespaceCatalog {
    private final Map<String, NamespaceConfig> byName = new ConcurrentHashMap<>();

    public static NamespaceCatalog fromDirectory(Path dir) throws IOException {
        NamespaceCatalog catalog = new NamespaceCatalog();
        try (DirectoryStream<Path> files = Files.newDirectoryStream(dir, "*.json")) {
            for (Path f : files) {
                String name = f.getFileName().toString().replaceFirst("\\.json$", "");
                try {
                    catalog.put(NamespaceConfigParser.parse(name, Files.readString(f)));
                } catch (InvalidConfigException e) {
                    throw new InvalidConfigException(e.field(), "in " + f + ": " + e.getMessage());
                }
            }
        }
        return catalog;
    }

    public void put(NamespaceConfig config) {
        byName.put(config.name(), config);
    }

    public void remove(String name) {
        byName.remove(name);
    }

    public Optional<NamespaceConfig> get(String name) {
        return Optional.ofNullable(byName.get(name));
    }

    public Collection<NamespaceConfig> all() {
        return new TreeMap<>(byName).values();
    }
}
