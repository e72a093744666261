package io.tally.registry;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.tally.common.AdminToken;
import io.tally.common.OpenApiDocument;
import io.vertx.core.Vertx;
import io.vertx.ext.web.Route;
import java.util.Iterator;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/** The registry's OpenAPI document against its router: the same routes and methods. */
class RegistryOpenApiTest {
    @Test
    void the_document_and_the_router_have_the_same_routes_and_methods() {
        RegistryState state = new RegistryState(CompatibilityLevel.BACKWARD);
        RegistryService service = new RegistryService(
                state, new InMemoryLog(new InMemoryLog.Shared(), state), CompatibilityLevel.BACKWARD);
        Vertx vertx = Vertx.vertx();
        try {
            Set<String> routed = new TreeSet<>();
            for (Route route : new RegistryHttpApi(service, new RegistryMetrics(state), () -> true, new AdminToken("t"))
                    .router(vertx, 1024)
                    .getRoutes()) {
                if (route.getPath() != null && route.methods() != null) {
                    route.methods().forEach(m -> routed.add(m.name() + " " + route.getPath()));
                }
            }
            Set<String> documented = new TreeSet<>();
            JsonNode paths = RegistryHttpApi.DOCUMENT.root().get("paths");
            for (Iterator<Map.Entry<String, JsonNode>> it = paths.fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> p = it.next();
                p.getValue()
                        .fieldNames()
                        .forEachRemaining(
                                m -> documented.add(m.toUpperCase() + " " + OpenApiDocument.routerPath(p.getKey())));
            }
            assertThat(documented).isEqualTo(routed);
        } finally {
            vertx.close();
        }
    }
}
