package io.tally.gateway.service;

import io.tally.namespace.InvalidConfigException;
import io.tally.namespace.NamespaceCatalog;
import io.tally.namespace.NamespaceConfig;
import io.tally.namespace.NamespaceName;

/**
 * The namespace a request names, as this gateway applies it now (the live catalog the control
 * plane feeds): refused as INVALID_NAME when the name is unsafe, UNKNOWN_NAMESPACE when there is
 * none, WRONG_NAMESPACE_KIND when it is not of the kind the endpoint serves.
 */
public final class NamespaceResolver {
    private final NamespaceCatalog catalog;

    public NamespaceResolver(NamespaceCatalog catalog) {
        this.catalog = catalog;
    }

    public NamespaceConfig require(String name, NamespaceConfig.Kind kind) {
        try {
            NamespaceName.require(name, "namespace");
        } catch (InvalidConfigException e) {
            throw new ServiceException(ErrorCode.INVALID_NAME, e.getMessage(), "namespace");
        }
        NamespaceConfig ns = catalog.get(name)
                .orElseThrow(() -> new ServiceException(
                        ErrorCode.UNKNOWN_NAMESPACE, "namespace '" + name + "' does not exist", "namespace"));
        if (ns.kind() != kind) {
            throw new ServiceException(
                    ErrorCode.WRONG_NAMESPACE_KIND,
                    "namespace '" + name + "' is a " + ns.kind().name().toLowerCase() + " namespace, not a "
                            + kind.name().toLowerCase() + " one",
                    "namespace");
        }
        return ns;
    }

    /** The version of the namespace's config this gateway applies (sent with each record). */
    public long version(String name) {
        return catalog.version(name);
    }

    /**
     * When the namespace of this name was created (0: unknown): part of every idempotency key, so a
     * token of a namespace deleted since is not a retry in the one created again.
     */
    public long createdMicros(String name) {
        return catalog.createdMicros(name);
    }
}
