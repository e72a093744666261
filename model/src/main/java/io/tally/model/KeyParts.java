package io.tally.model;

/**
 * Joins ids into one key with '/' so that different ids never make the same key: a part holding
 * '/' or '%' is percent-escaped ('%' as %25, '/' as %2F), a part without them stays as it is (so
 * keys of ordinary ids read plainly). Without it, {@code x/1} + {@code t} and {@code x} +
 * {@code 1/t} were one key (a false 409, or one document overwriting another).
 */
public final class KeyParts {
    private KeyParts() {}

    public static String join(Object... parts) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < parts.length; i++) {
            if (i > 0) {
                sb.append('/');
            }
            sb.append(escape(String.valueOf(parts[i])));
        }
        return sb.toString();
    }

    static String escape(String part) {
        if (part.indexOf('/') < 0 && part.indexOf('%') < 0) {
            return part;
        }
        return part.replace("%", "%25").replace("/", "%2F");
    }
}
