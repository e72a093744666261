package io.tally.gateway.service;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.tally.gateway.service.ServiceException.Kind;
import io.tally.namespace.NamespaceCatalog;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * The admin service's refusals, decided before Postgres is asked (names, configs) and when it
 * cannot be reached (a port nothing listens on): each has its kind, code and field.
 */
class NamespaceAdminTest {
    static final ObjectMapper JSON = new ObjectMapper();
    final NamespaceAdmin admin;

    NamespaceAdminTest() throws Exception {
        admin = new NamespaceAdmin(
                new NamespaceStore("jdbc:postgresql://127.0.0.1:1/none", "u", "p"),
                NamespaceCatalog.fromDirectory(Path.of("../infra/namespaces")),
                name -> false);
    }

    @Test
    void anUnsafeNameIsRefusedBeforeTheStoreIsAsked() {
        assertThatThrownBy(() -> admin.get("x; DROP")).isInstanceOfSatisfying(ServiceException.class, e -> {
            assertThat(e.kind()).isEqualTo(Kind.INVALID);
            assertThat(e.code()).isEqualTo("INVALID_NAMESPACE_NAME");
            assertThat(e.field()).isEqualTo("name");
        });
    }

    @Test
    void anInvalidConfigIsRefusedNamingItsField() throws Exception {
        var config = JSON.readTree("{\"kind\": \"counter\", \"counter_type\": \"SOMETIMES\"}");
        assertThatThrownBy(() -> admin.put("fresh", config, null)).isInstanceOfSatisfying(ServiceException.class, e -> {
            assertThat(e.kind()).isEqualTo(Kind.INVALID);
            assertThat(e.code()).isEqualTo("INVALID_NAMESPACE_CONFIG");
            assertThat(e.field()).isEqualTo("counter_type");
        });
    }

    @Test
    void anUnreachableControlPlaneIsUnavailableNotAnError() throws Exception {
        var config = JSON.readTree("{\"kind\": \"counter\", \"counter_type\": \"EVENTUAL\"}");
        for (Runnable call : new Runnable[] {
            admin::list, () -> admin.get("playback"), () -> admin.put("fresh", config, 0L), () -> admin.delete("x", 1L)
        }) {
            assertThatThrownBy(call::run).isInstanceOfSatisfying(ServiceException.class, e -> {
                assertThat(e.kind()).isEqualTo(Kind.UNAVAILABLE);
                assertThat(e.code()).isEqualTo("CONTROL_PLANE_UNAVAILABLE");
            });
        }
    }
}
