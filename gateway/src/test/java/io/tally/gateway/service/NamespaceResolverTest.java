package io.tally.gateway.service;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tally.gateway.service.ServiceException.Kind;
import io.tally.namespace.NamespaceCatalog;
import io.tally.namespace.NamespaceConfig;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

class NamespaceResolverTest {
    final NamespaceResolver namespaces;

    NamespaceResolverTest() throws Exception {
        namespaces = new NamespaceResolver(NamespaceCatalog.fromDirectory(Path.of("../infra/namespaces")));
    }

    @Test
    void aKnownNamespaceOfTheKindResolves() {
        assertThat(namespaces
                        .require("playback", NamespaceConfig.Kind.TIMESERIES)
                        .name())
                .isEqualTo("playback");
    }

    @Test
    void eachRefusalHasItsKindCodeAndField() {
        assertThatThrownBy(() -> namespaces.require("DROP TABLE", NamespaceConfig.Kind.TIMESERIES))
                .isInstanceOfSatisfying(ServiceException.class, e -> {
                    assertThat(e.kind()).isEqualTo(Kind.INVALID);
                    assertThat(e.code()).isEqualTo("INVALID_NAME");
                    assertThat(e.field()).isEqualTo("namespace");
                });
        assertThatThrownBy(() -> namespaces.require("nope", NamespaceConfig.Kind.TIMESERIES))
                .isInstanceOfSatisfying(
                        ServiceException.class, e -> assertThat(e.kind()).isEqualTo(Kind.NOT_FOUND));
        assertThatThrownBy(() -> namespaces.require("playback", NamespaceConfig.Kind.COUNTER))
                .isInstanceOfSatisfying(
                        ServiceException.class, e -> assertThat(e.code()).isEqualTo("WRONG_NAMESPACE_KIND"));
    }
}
