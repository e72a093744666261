package io.tally.common;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.util.Locale;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/** The TLS context of a client that checks servers against a trust store and shows no key of its own. */
final class TrustStores {
    private TrustStores() {}

    /**
     * A context trusting the CAs of `store` (PEM, PKCS12 or JKS by its extension; empty = the
     * JVM's default CAs).
     *
     * @throws IllegalArgumentException naming `setting` when the store cannot be used
     */
    static SSLContext sslContext(String setting, String store, String password) {
        try {
            TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            tmf.init(store.isEmpty() ? null : load(store, password));
            SSLContext context = SSLContext.getInstance("TLS");
            context.init(null, tmf.getTrustManagers(), null);
            return context;
        } catch (GeneralSecurityException | IOException e) {
            throw new IllegalArgumentException(setting + "=" + store + " cannot be used: " + e.getMessage(), e);
        }
    }

    private static KeyStore load(String store, String password) throws GeneralSecurityException, IOException {
        String lower = store.toLowerCase(Locale.ROOT);
        if (lower.endsWith(".pem") || lower.endsWith(".crt")) {
            KeyStore ks = KeyStore.getInstance(KeyStore.getDefaultType());
            ks.load(null, null);
            try (InputStream in = Files.newInputStream(Path.of(store))) {
                int i = 0;
                for (Certificate c : CertificateFactory.getInstance("X.509").generateCertificates(in)) {
                    ks.setCertificateEntry("ca-" + i++, c);
                }
                if (i == 0) {
                    throw new GeneralSecurityException("no certificate in it");
                }
            }
            return ks;
        }
        KeyStore ks = KeyStore.getInstance(lower.endsWith(".jks") ? "JKS" : "PKCS12");
        try (InputStream in = Files.newInputStream(Path.of(store))) {
            ks.load(in, password.isEmpty() ? null : password.toCharArray());
        }
        return ks;
    }
}
