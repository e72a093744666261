package io.tally.common;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A service's settings, declared once as {@link Field}s with a default and a description.
 * Each can be set by an environment variable or a {@code --name=value} flag (flags win);
 * {@link #usage} lists them all for {@code --help}.
 */
public final class ServiceSettings {
    /** One setting. */
    public record Field(String name, String env, String defaultValue, String description) {}

    private final List<Field> fields;
    private final Map<String, String> values = new LinkedHashMap<>();

    private ServiceSettings(List<Field> fields) {
        this.fields = fields;
    }

    public static ServiceSettings from(List<Field> fields, Map<String, String> env, String[] args) {
        ServiceSettings s = new ServiceSettings(fields);
        for (Field f : fields) {
            s.values.put(f.name(), env.getOrDefault(f.env(), f.defaultValue()));
        }
        for (String arg : args) {
            int eq = arg.indexOf('=');
            if (!arg.startsWith("--") || eq < 0 || !s.values.containsKey(arg.substring(2, eq))) {
                throw new IllegalArgumentException("unknown or malformed setting " + arg + "\n" + usage(fields));
            }
            s.values.put(arg.substring(2, eq), arg.substring(eq + 1));
        }
        return s;
    }

    public static String usage(List<Field> fields) {
        StringBuilder sb = new StringBuilder("settings (flag / environment, default):\n");
        for (Field f : fields) {
            sb.append(
                    String.format("  --%-26s %-42s %-22s %s%n", f.name(), f.env(), f.defaultValue(), f.description()));
        }
        return sb.toString();
    }

    public String get(Field f) {
        if (!values.containsKey(f.name())) {
            throw new IllegalArgumentException("setting " + f.name() + " is not declared for this service");
        }
        return values.get(f.name());
    }

    /** A declared setting's value by its name, null when the service does not declare it. */
    public String byName(String name) {
        return values.get(name);
    }

    /** A whole number in [min, max]; the error names the setting. */
    public long longIn(Field f, long min, long max) {
        long v;
        try {
            v = Long.parseLong(get(f));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(f.name() + "=" + get(f) + " is not a whole number");
        }
        if (v < min || v > max) {
            throw new IllegalArgumentException(f.name() + "=" + v + " is outside " + min + ".." + max);
        }
        return v;
    }

    public int intIn(Field f, int min, int max) {
        return (int) longIn(f, min, max);
    }

    /** true or false (any case); anything else is refused, so a typo cannot leave a setting off. */
    public boolean flag(Field f) {
        String v = get(f).trim();
        if (v.equalsIgnoreCase("true") || v.equalsIgnoreCase("false")) {
            return Boolean.parseBoolean(v);
        }
        throw new IllegalArgumentException(f.name() + "=" + get(f) + " is neither true nor false");
    }

    /** The admin token of a service: its token setting, and its explicit opening without one. */
    public AdminToken adminToken(Field token, Field open) {
        return new AdminToken(get(token), flag(open));
    }
}
