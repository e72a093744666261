package io.tally.common;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/** Reading the secrets and switches of client security settings, with errors that name the setting. */
final class Secrets {
    private Secrets() {}

    /** A password file's first line, trimmed: what a file written with or without a newline holds. */
    static String firstLine(Path file, String setting) {
        try {
            List<String> lines = Files.readAllLines(file);
            String line = lines.isEmpty() ? "" : lines.get(0).strip();
            if (line.isEmpty()) {
                throw new IllegalArgumentException(setting + "=" + file + " is empty");
            }
            return line;
        } catch (IOException e) {
            throw new IllegalArgumentException(setting + "=" + file + " cannot be read: " + e.getMessage(), e);
        }
    }

    /** A setting's value looked up by its name, its default when not given or empty. */
    static String value(java.util.function.UnaryOperator<String> byName, ServiceSettings.Field f) {
        String v = byName.apply(f.name());
        return v == null || v.isEmpty() ? f.defaultValue() : v;
    }

    /** true or false (any case); anything else is refused, so a typo cannot leave a check off. */
    static boolean flag(String setting, String value) {
        String v = value.trim();
        if (v.equalsIgnoreCase("true") || v.equalsIgnoreCase("false")) {
            return Boolean.parseBoolean(v);
        }
        throw new IllegalArgumentException(setting + "=" + value + " is neither true nor false");
    }
}
