package io.tally.common;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.UnaryOperator;

/**
 * How a Tally client authenticates to Kafka and checks the broker it reached: the security
 * protocol, SASL credentials (SCRAM-SHA-512 by default, as a hardened cluster asks) and the trust
 * store TLS verifies the broker's certificate with. Declared once as settings every Kafka client
 * of Tally takes (gateway, registry, jobs, tools); {@link #properties()} gives the client
 * properties Kafka's Java clients read. The password never appears in {@link #toString()}, and it
 * can come from a file, so it need be in no environment or command line.
 */
public final class KafkaClientSecurity {
    public static final ServiceSettings.Field PROTOCOL = new ServiceSettings.Field(
            "kafka.security.protocol",
            "TALLY_KAFKA_SECURITY_PROTOCOL",
            "PLAINTEXT",
            "How clients reach Kafka: PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL.");
    public static final ServiceSettings.Field MECHANISM = new ServiceSettings.Field(
            "kafka.sasl.mechanism",
            "TALLY_KAFKA_SASL_MECHANISM",
            "SCRAM-SHA-512",
            "SASL mechanism (SASL_* protocols): SCRAM-SHA-512, SCRAM-SHA-256 or PLAIN.");
    public static final ServiceSettings.Field USERNAME = new ServiceSettings.Field(
            "kafka.sasl.username", "TALLY_KAFKA_SASL_USERNAME", "", "SASL user (SASL_* protocols).");
    public static final ServiceSettings.Field PASSWORD = new ServiceSettings.Field(
            "kafka.sasl.password",
            "TALLY_KAFKA_SASL_PASSWORD",
            "",
            "SASL password; set it in the environment or use kafka.sasl.password.file, never a flag.");
    public static final ServiceSettings.Field PASSWORD_FILE = new ServiceSettings.Field(
            "kafka.sasl.password.file",
            "TALLY_KAFKA_SASL_PASSWORD_FILE",
            "",
            "A file holding the SASL password (its first line); wins over kafka.sasl.password.");
    public static final ServiceSettings.Field TRUSTSTORE = new ServiceSettings.Field(
            "kafka.ssl.truststore",
            "TALLY_KAFKA_SSL_TRUSTSTORE",
            "",
            "Trust store the broker's certificate is checked against (SSL, SASL_SSL): PEM, PKCS12 or JKS by"
                    + " extension; empty = the JVM's default CAs.");
    public static final ServiceSettings.Field TRUSTSTORE_PASSWORD = new ServiceSettings.Field(
            "kafka.ssl.truststore.password",
            "TALLY_KAFKA_SSL_TRUSTSTORE_PASSWORD",
            "",
            "Password of a PKCS12 or JKS trust store (none for PEM).");
    public static final ServiceSettings.Field VERIFY_HOSTNAME = new ServiceSettings.Field(
            "kafka.ssl.verify.hostname",
            "TALLY_KAFKA_SSL_VERIFY_HOSTNAME",
            "true",
            "true: the broker's certificate must name the host the client dialled (Kafka's default, https).");

    /** Every setting, for a service's list of fields. */
    public static final List<ServiceSettings.Field> FIELDS = List.of(
            PROTOCOL, MECHANISM, USERNAME, PASSWORD, PASSWORD_FILE, TRUSTSTORE, TRUSTSTORE_PASSWORD, VERIFY_HOSTNAME);

    private static final List<String> PROTOCOLS = List.of("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL");
    private static final List<String> MECHANISMS = List.of("SCRAM-SHA-512", "SCRAM-SHA-256", "PLAIN");

    private final String protocol;
    private final String mechanism;
    private final String username;
    private final String password;
    private final String truststore;
    private final String truststorePassword;
    private final boolean verifyHostname;

    private KafkaClientSecurity(
            String protocol,
            String mechanism,
            String username,
            String password,
            String truststore,
            String truststorePassword,
            boolean verifyHostname) {
        this.protocol = protocol;
        this.mechanism = mechanism;
        this.username = username;
        this.password = password;
        this.truststore = truststore;
        this.truststorePassword = truststorePassword;
        this.verifyHostname = verifyHostname;
    }

    /** No authentication, no TLS: a local broker's PLAINTEXT listener. */
    public static final KafkaClientSecurity PLAINTEXT = new KafkaClientSecurity("PLAINTEXT", "", "", "", "", "", true);

    /** From a service's settings (environment and flags). */
    public static KafkaClientSecurity from(ServiceSettings settings) {
        return from(settings::byName);
    }

    /**
     * From settings looked up by their names ({@code kafka.security.protocol}, ...; null or empty
     * = the default): how the jobs, whose arguments are not {@link ServiceSettings}, read them.
     *
     * @throws IllegalArgumentException naming the setting that is wrong or missing
     */
    public static KafkaClientSecurity from(UnaryOperator<String> byName) {
        String protocol = Secrets.value(byName, PROTOCOL).toUpperCase(Locale.ROOT);
        if (!PROTOCOLS.contains(protocol)) {
            throw new IllegalArgumentException(
                    PROTOCOL.name() + "=" + protocol + " is none of " + String.join(", ", PROTOCOLS));
        }
        boolean sasl = protocol.startsWith("SASL_");
        boolean tls = protocol.endsWith("SSL");
        String mechanism = Secrets.value(byName, MECHANISM).toUpperCase(Locale.ROOT);
        String username = Secrets.value(byName, USERNAME);
        String password = Secrets.value(byName, PASSWORD);
        String file = Secrets.value(byName, PASSWORD_FILE);
        if (!file.isEmpty()) {
            password = Secrets.firstLine(Path.of(file), PASSWORD_FILE.name());
        }
        if (sasl) {
            if (!MECHANISMS.contains(mechanism)) {
                throw new IllegalArgumentException(
                        MECHANISM.name() + "=" + mechanism + " is none of " + String.join(", ", MECHANISMS));
            }
            if (username.isEmpty() || password.isEmpty()) {
                throw new IllegalArgumentException(PROTOCOL.name() + "=" + protocol + " needs " + USERNAME.name()
                        + " and " + PASSWORD.name() + " (or " + PASSWORD_FILE.name() + ")");
            }
        }
        String truststore = Secrets.value(byName, TRUSTSTORE);
        if (tls && !truststore.isEmpty() && !Files.isReadable(Path.of(truststore))) {
            throw new IllegalArgumentException(TRUSTSTORE.name() + "=" + truststore + " cannot be read");
        }
        boolean verify = Secrets.flag(VERIFY_HOSTNAME.name(), Secrets.value(byName, VERIFY_HOSTNAME));
        return new KafkaClientSecurity(
                protocol,
                sasl ? mechanism : "",
                sasl ? username : "",
                sasl ? password : "",
                tls ? truststore : "",
                tls ? Secrets.value(byName, TRUSTSTORE_PASSWORD) : "",
                verify);
    }

    /** The client properties of Kafka's Java clients (producer, consumer, admin) for this security. */
    public Map<String, String> properties() {
        return properties(password);
    }

    /**
     * The same with the password given as a config-provider reference the client resolves where
     * it runs (the jobs: it names the password file, so the password is in no job graph).
     */
    public Map<String, String> properties(String passwordReference) {
        Map<String, String> p = new LinkedHashMap<>();
        p.put("security.protocol", protocol);
        if (!mechanism.isEmpty()) {
            p.put("sasl.mechanism", mechanism);
            String module = mechanism.equals("PLAIN")
                    ? "org.apache.kafka.common.security.plain.PlainLoginModule"
                    : "org.apache.kafka.common.security.scram.ScramLoginModule";
            p.put(
                    "sasl.jaas.config",
                    module + " required username=\"" + jaasQuoted(username) + "\" password=\""
                            + jaasQuoted(passwordReference) + "\";");
        }
        if (protocol.endsWith("SSL")) {
            if (!truststore.isEmpty()) {
                p.put("ssl.truststore.location", truststore);
                p.put("ssl.truststore.type", storeType(truststore));
                if (!truststorePassword.isEmpty()) {
                    p.put("ssl.truststore.password", truststorePassword);
                }
            }
            p.put("ssl.endpoint.identification.algorithm", verifyHostname ? "https" : "");
        }
        return p;
    }

    /** A new set of client properties: the bootstrap servers and this security (each client adds its own). */
    public java.util.Properties client(String bootstrap) {
        java.util.Properties p = new java.util.Properties();
        p.put("bootstrap.servers", bootstrap);
        p.putAll(properties());
        return p;
    }

    /** Whether the client authenticates or encrypts at all (anything but PLAINTEXT). */
    public boolean sasl() {
        return !mechanism.isEmpty();
    }

    public boolean secured() {
        return !protocol.equals("PLAINTEXT");
    }

    public String protocol() {
        return protocol;
    }

    /** What a log may say: protocol, mechanism, user and trust store, never the password. */
    @Override
    public String toString() {
        if (!secured()) {
            return "PLAINTEXT";
        }
        StringBuilder sb = new StringBuilder(protocol);
        if (!mechanism.isEmpty()) {
            sb.append(' ').append(mechanism).append(" as ").append(username);
        }
        if (!truststore.isEmpty()) {
            sb.append(", trusting ").append(truststore);
        }
        return sb.toString();
    }

    /** PEM for .pem/.crt, JKS for .jks, else PKCS12 (Java's default keystore type). */
    static String storeType(String path) {
        String lower = path.toLowerCase(Locale.ROOT);
        if (lower.endsWith(".pem") || lower.endsWith(".crt")) {
            return "PEM";
        }
        return lower.endsWith(".jks") ? "JKS" : "PKCS12";
    }

    /** A JAAS option value inside double quotes: backslashes and quotes escaped. */
    static String jaasQuoted(String s) {
        return s.replace("\\", "\\\\").replace("\"", "\\\"");
    }
}
