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
 * The namespaces a service knows, by name. Fed by the control plane's change stream
 * ({@link #apply}); {@link #fromDirectory} loads the seed files (tests, tools).
 */
public final class NamespaceCatalog implements Namespaces {
    private final Map<String, NamespaceConfig> byName = new ConcurrentHashMap<>();
    private final Map<String, Long> versions = new ConcurrentHashMap<>();
    private final Map<String, Long> created = new ConcurrentHashMap<>();

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

    /** The seed configs of a directory as changes at version 0, in name order (a test's control stream). */
    public static java.util.List<NamespaceChange> seedChanges(Path dir) throws IOException {
        java.util.List<NamespaceChange> out = new java.util.ArrayList<>();
        for (NamespaceConfig ns : fromDirectory(dir).all()) {
            out.add(NamespaceChange.upsert(ns.name(), 0, Files.readString(dir.resolve(ns.name() + ".json"))));
        }
        return out;
    }

    /** Applies a control-plane change; a row that does not validate is refused and the old config stays. */
    public void apply(NamespaceChange change) {
        if (change.deleted) {
            remove(change.name);
            versions.remove(change.name);
            created.remove(change.name);
        } else {
            put(change.config());
            versions.put(change.name, change.version);
            created.put(change.name, change.createdMicros);
        }
    }

    public void put(NamespaceConfig config) {
        byName.put(config.name(), config);
    }

    public void remove(String name) {
        byName.remove(name);
    }

    @Override
    public Optional<NamespaceConfig> get(String name) {
        return Optional.ofNullable(byName.get(name));
    }

    /** The control-plane version of a namespace's config (0 for one not from the control plane). */
    public long version(String name) {
        return versions.getOrDefault(name, 0L);
    }

    /** When the namespace of this name was created ({@link NamespaceChange#createdMicros}; 0: unknown). */
    public long createdMicros(String name) {
        return created.getOrDefault(name, 0L);
    }

    public Collection<NamespaceConfig> all() {
        return new TreeMap<>(byName).values();
    }
}
