package io.tally.common;

import java.io.Serializable;
import java.nio.file.Path;
import java.util.function.UnaryOperator;

/**
 * A user and its password as a client security setting holds them: the password given, or a
 * file whose first line it is. Serializable without the password, which a TaskManager reads from
 * the file where it is used (so a rotated file is read again); never shown by {@link #toString()}.
 */
final class Login implements Serializable {
    private static final long serialVersionUID = 1L;

    static final Login NONE = new Login("", null, "");

    private final String username;
    private final transient String password; // not shipped: read from passwordFile where it is used
    private final String passwordFile;

    private Login(String username, String password, String passwordFile) {
        this.username = username;
        this.password = password;
        this.passwordFile = passwordFile;
    }

    /**
     * From the three settings; the file wins over the value, and a user needs one of them.
     *
     * @throws IllegalArgumentException naming the setting that is missing or cannot be read
     */
    static Login from(
            UnaryOperator<String> byName,
            ServiceSettings.Field user,
            ServiceSettings.Field password,
            ServiceSettings.Field passwordFile) {
        String username = Secrets.value(byName, user);
        if (username.isEmpty()) {
            return NONE;
        }
        String given = Secrets.value(byName, password);
        String file = Secrets.value(byName, passwordFile);
        if (!file.isEmpty()) {
            given = Secrets.firstLine(Path.of(file), passwordFile.name()); // readable here: checked at start
        } else if (given.isEmpty()) {
            throw new IllegalArgumentException(
                    user.name() + "=" + username + " needs " + password.name() + " (or " + passwordFile.name() + ")");
        }
        return new Login(username, given, file);
    }

    boolean present() {
        return !username.isEmpty();
    }

    String username() {
        return username;
    }

    /** The password: the one given, or (shipped to a TaskManager) its file's first line, read now. */
    String password(ServiceSettings.Field passwordFile) {
        return password != null ? password : Secrets.firstLine(Path.of(this.passwordFile), passwordFile.name());
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Login l && username.equals(l.username) && passwordFile.equals(l.passwordFile);
    }

    @Override
    public int hashCode() {
        return java.util.Objects.hash(username, passwordFile);
    }

    @Override
    public String toString() {
        return present() ? "as " + username : "without a login";
    }
}
