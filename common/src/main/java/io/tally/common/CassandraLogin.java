package io.tally.common;

import com.datastax.oss.driver.api.core.CqlSessionBuilder;
import com.datastax.oss.driver.api.core.ssl.ProgrammaticSslEngineFactory;

/** {@link CassandraClientSecurity} on a session of the Java driver: its login and its TLS. */
public final class CassandraLogin {
    private CassandraLogin() {}

    public static CqlSessionBuilder applied(CqlSessionBuilder builder, CassandraClientSecurity security) {
        if (security.login()) {
            builder.withAuthCredentials(security.username(), security.password());
        }
        if (security.ssl()) {
            builder.withSslEngineFactory(
                    new ProgrammaticSslEngineFactory(security.sslContext(), null, security.verifyHostname()));
        }
        return builder;
    }
}
