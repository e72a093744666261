package io.tally.common;

import java.io.Serializable;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;
import java.util.List;
import java.util.Objects;
import java.util.function.UnaryOperator;
import javax.net.ssl.SSLContext;

/**
 * How a Tally client logs in to Elasticsearch and checks the node it reached: a user and its
 * password (basic authentication, what Elasticsearch's security answers with a 401 without), and
 * the trust store an https URL's certificate is checked against. TLS itself is the URL's scheme.
 * Declared once as settings the gateway and the jobs take; serializable without the password (a
 * job ships this to its TaskManagers, which read the password from its file there), and
 * {@link #toString()} never shows it.
 */
public final class ElasticsearchClientSecurity implements Serializable {
    private static final long serialVersionUID = 1L;

    public static final ServiceSettings.Field USERNAME = new ServiceSettings.Field(
            "elasticsearch.username",
            "TALLY_ELASTICSEARCH_USERNAME",
            "",
            "User Tally logs in to Elasticsearch as (basic authentication); empty = no login.");
    public static final ServiceSettings.Field PASSWORD = new ServiceSettings.Field(
            "elasticsearch.password",
            "TALLY_ELASTICSEARCH_PASSWORD",
            "",
            "The user's password; set it in the environment or use elasticsearch.password.file, never a flag.");
    public static final ServiceSettings.Field PASSWORD_FILE = new ServiceSettings.Field(
            "elasticsearch.password.file",
            "TALLY_ELASTICSEARCH_PASSWORD_FILE",
            "",
            "A file holding the user's password (its first line); wins over elasticsearch.password.");
    public static final ServiceSettings.Field TRUSTSTORE = new ServiceSettings.Field(
            "elasticsearch.ssl.truststore",
            "TALLY_ELASTICSEARCH_SSL_TRUSTSTORE",
            "",
            "Trust store an https URL's certificate is checked against: PEM, PKCS12 or JKS by extension;"
                    + " empty = the JVM's default CAs.");
    public static final ServiceSettings.Field TRUSTSTORE_PASSWORD = new ServiceSettings.Field(
            "elasticsearch.ssl.truststore.password",
            "TALLY_ELASTICSEARCH_SSL_TRUSTSTORE_PASSWORD",
            "",
            "Password of a PKCS12 or JKS trust store (none for PEM).");

    /** Every setting, for a service's list of fields. */
    public static final List<ServiceSettings.Field> FIELDS =
            List.of(USERNAME, PASSWORD, PASSWORD_FILE, TRUSTSTORE, TRUSTSTORE_PASSWORD);

    /** No login, the JVM's CAs. */
    public static final ElasticsearchClientSecurity NONE = new ElasticsearchClientSecurity(Login.NONE, "", "");

    private final Login login;
    private final String truststore;
    private final String truststorePassword;

    private ElasticsearchClientSecurity(Login login, String truststore, String truststorePassword) {
        this.login = login;
        this.truststore = truststore;
        this.truststorePassword = truststorePassword;
    }

    /** From a service's settings (environment and flags). */
    public static ElasticsearchClientSecurity from(ServiceSettings settings) {
        return from(settings::byName);
    }

    /**
     * From settings looked up by name (null or empty = the default): the jobs' arguments, which
     * declare no password, only its file.
     *
     * @throws IllegalArgumentException naming the setting that is wrong or missing
     */
    public static ElasticsearchClientSecurity from(UnaryOperator<String> byName) {
        Login login = Login.from(byName, USERNAME, PASSWORD, PASSWORD_FILE);
        String truststore = Secrets.value(byName, TRUSTSTORE);
        if (!truststore.isEmpty() && !Files.isReadable(Path.of(truststore))) {
            throw new IllegalArgumentException(TRUSTSTORE.name() + "=" + truststore + " cannot be read");
        }
        return new ElasticsearchClientSecurity(login, truststore, Secrets.value(byName, TRUSTSTORE_PASSWORD));
    }

    /** Whether the client logs in (basic authentication). */
    public boolean login() {
        return login.present();
    }

    /** The user's password: the one given, or (on a TaskManager) its file's first line, read now. */
    public String password() {
        if (!login()) {
            throw new IllegalStateException("no Elasticsearch login configured");
        }
        return login.password(PASSWORD_FILE);
    }

    public String username() {
        return login.username();
    }

    /** The TLS context of https connections: the trust store's CAs (or the JVM's), no client key. */
    public SSLContext sslContext() {
        return TrustStores.sslContext(TRUSTSTORE.name(), truststore, truststorePassword);
    }

    /** A client of these settings: https checked against the trust store. */
    public HttpClient.Builder configure(HttpClient.Builder client) {
        return truststore.isEmpty() ? client : client.sslContext(sslContext());
    }

    /**
     * The Authorization header's value of the login, null without one. A client computes it once
     * (a rotated password file is read by the next client made).
     */
    public String authorization() {
        if (!login()) {
            return null;
        }
        String pair = username() + ":" + password();
        return "Basic " + Base64.getEncoder().encodeToString(pair.getBytes(StandardCharsets.UTF_8));
    }

    /** Equal when they log in the same way (the password itself aside) with the same trust. */
    @Override
    public boolean equals(Object o) {
        return o instanceof ElasticsearchClientSecurity c
                && login.equals(c.login)
                && truststore.equals(c.truststore)
                && truststorePassword.equals(c.truststorePassword);
    }

    @Override
    public int hashCode() {
        return Objects.hash(login, truststore);
    }

    /** What a log may say: the user and the trust store, never the password. */
    @Override
    public String toString() {
        return login + (truststore.isEmpty() ? "" : ", trusting " + truststore);
    }
}
