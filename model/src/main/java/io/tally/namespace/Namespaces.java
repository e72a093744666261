package io.tally.namespace;

import java.util.Optional;

/** Looks a namespace's current config up by name: a catalog in a service, broadcast state in a Flink job. */
public interface Namespaces {
    Optional<NamespaceConfig> get(String name);
}
