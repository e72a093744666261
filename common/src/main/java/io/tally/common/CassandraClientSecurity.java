package io.tally.common;

import java.io.Serializable;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.function.UnaryOperator;
import javax.net.ssl.SSLContext;

/**
 * How a Tally client logs in to Cassandra and checks the node it reached: a role and its password
 * (Cassandra's PasswordAuthenticator), and TLS against a trust store. Declared once as settings
 * the gateway and the jobs take; the driver-specific wiring stays with each. Serializable without
 * the password: a job ships this to its TaskManagers, which read the password from its file
 * there; {@link #toString()} never shows it.
 */
public final class CassandraClientSecurity implements Serializable {
    private static final long serialVersionUID = 1L;

    public static final ServiceSettings.Field USERNAME = new ServiceSettings.Field(
            "cassandra.username",
            "TALLY_CASSANDRA_USERNAME",
            "",
            "Role Tally logs in to Cassandra as (PasswordAuthenticator); empty = no login.");
    public static final ServiceSettings.Field PASSWORD = new ServiceSettings.Field(
            "cassandra.password",
            "TALLY_CASSANDRA_PASSWORD",
            "",
            "The role's password; set it in the environment or use cassandra.password.file, never a flag.");
    public static final ServiceSettings.Field PASSWORD_FILE = new ServiceSettings.Field(
            "cassandra.password.file",
            "TALLY_CASSANDRA_PASSWORD_FILE",
            "",
            "A file holding the role's password (its first line); wins over cassandra.password.");
    public static final ServiceSettings.Field SSL = new ServiceSettings.Field(
            "cassandra.ssl", "TALLY_CASSANDRA_SSL", "false", "true: connect to Cassandra over TLS.");
    public static final ServiceSettings.Field TRUSTSTORE = new ServiceSettings.Field(
            "cassandra.ssl.truststore",
            "TALLY_CASSANDRA_SSL_TRUSTSTORE",
            "",
            "Trust store the nodes' certificates are checked against: PEM, PKCS12 or JKS by extension;"
                    + " empty = the JVM's default CAs.");
    public static final ServiceSettings.Field TRUSTSTORE_PASSWORD = new ServiceSettings.Field(
            "cassandra.ssl.truststore.password",
            "TALLY_CASSANDRA_SSL_TRUSTSTORE_PASSWORD",
            "",
            "Password of a PKCS12 or JKS trust store (none for PEM).");
    public static final ServiceSettings.Field VERIFY_HOSTNAME = new ServiceSettings.Field(
            "cassandra.ssl.verify.hostname",
            "TALLY_CASSANDRA_SSL_VERIFY_HOSTNAME",
            "true",
            "true: a node's certificate must name the address the client dialled.");

    /** Every setting, for a service's list of fields. */
    public static final List<ServiceSettings.Field> FIELDS =
            List.of(USERNAME, PASSWORD, PASSWORD_FILE, SSL, TRUSTSTORE, TRUSTSTORE_PASSWORD, VERIFY_HOSTNAME);

    /** No login, no TLS. */
    public static final CassandraClientSecurity NONE = new CassandraClientSecurity(Login.NONE, false, "", "", true);

    private final Login login;
    private final boolean ssl;
    private final String truststore;
    private final String truststorePassword;
    private final boolean verifyHostname;

    private CassandraClientSecurity(
            Login login, boolean ssl, String truststore, String truststorePassword, boolean verifyHostname) {
        this.login = login;
        this.ssl = ssl;
        this.truststore = truststore;
        this.truststorePassword = truststorePassword;
        this.verifyHostname = verifyHostname;
    }

    /** From a service's settings (environment and flags). */
    public static CassandraClientSecurity from(ServiceSettings settings) {
        return from(settings::byName);
    }

    /**
     * From settings looked up by name (null or empty = the default): the jobs' arguments, which
     * declare no password, only its file.
     *
     * @throws IllegalArgumentException naming the setting that is wrong or missing
     */
    public static CassandraClientSecurity from(UnaryOperator<String> byName) {
        Login login = Login.from(byName, USERNAME, PASSWORD, PASSWORD_FILE);
        boolean ssl = Secrets.flag(SSL.name(), Secrets.value(byName, SSL));
        String truststore = Secrets.value(byName, TRUSTSTORE);
        if (ssl && !truststore.isEmpty() && !Files.isReadable(Path.of(truststore))) {
            throw new IllegalArgumentException(TRUSTSTORE.name() + "=" + truststore + " cannot be read");
        }
        return new CassandraClientSecurity(
                login,
                ssl,
                ssl ? truststore : "",
                ssl ? Secrets.value(byName, TRUSTSTORE_PASSWORD) : "",
                Secrets.flag(VERIFY_HOSTNAME.name(), Secrets.value(byName, VERIFY_HOSTNAME)));
    }

    /** Whether the client logs in (PasswordAuthenticator). */
    public boolean login() {
        return login.present();
    }

    public String username() {
        return login.username();
    }

    /** The role's password: the one given, or (on a TaskManager) its file's first line, read now. */
    public String password() {
        if (!login()) {
            throw new IllegalStateException("no Cassandra login configured");
        }
        return login.password(PASSWORD_FILE);
    }

    public boolean ssl() {
        return ssl;
    }

    public boolean verifyHostname() {
        return verifyHostname;
    }

    /** The TLS context of the connections: the trust store's CAs (or the JVM's), no client key. */
    public SSLContext sslContext() {
        return TrustStores.sslContext(TRUSTSTORE.name(), truststore, truststorePassword);
    }

    /** Equal when they log in the same way (the password itself aside) with the same TLS. */
    @Override
    public boolean equals(Object o) {
        return o instanceof CassandraClientSecurity c
                && login.equals(c.login)
                && ssl == c.ssl
                && truststore.equals(c.truststore)
                && truststorePassword.equals(c.truststorePassword)
                && verifyHostname == c.verifyHostname;
    }

    @Override
    public int hashCode() {
        return java.util.Objects.hash(login, ssl, truststore, verifyHostname);
    }

    /** What a log may say: the role, TLS and its trust store, never the password. */
    @Override
    public String toString() {
        return login + (ssl ? ", TLS" + (truststore.isEmpty() ? "" : " trusting " + truststore) : ", no TLS");
    }
}
