package io.tally.registry;

import java.util.Locale;

/** The Confluent compatibility levels: which earlier versions a new schema is checked against, and how. */
public enum CompatibilityLevel {
    NONE(false, false, false),
    BACKWARD(true, false, false),
    BACKWARD_TRANSITIVE(true, false, true),
    FORWARD(false, true, false),
    FORWARD_TRANSITIVE(false, true, true),
    FULL(true, true, false),
    FULL_TRANSITIVE(true, true, true);

    /** The new schema must read data written with the old one. */
    final boolean newReadsOld;
    /** The old schema must read data written with the new one. */
    final boolean oldReadsNew;
    /** Against every earlier version, not just the latest. */
    final boolean transitive;

    CompatibilityLevel(boolean newReadsOld, boolean oldReadsNew, boolean transitive) {
        this.newReadsOld = newReadsOld;
        this.oldReadsNew = oldReadsNew;
        this.transitive = transitive;
    }

    public static CompatibilityLevel parse(String raw) {
        if (raw == null) {
            throw RegistryError.invalidCompatibility("null");
        }
        try {
            return valueOf(raw.trim().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw RegistryError.invalidCompatibility(raw);
        }
    }
}
