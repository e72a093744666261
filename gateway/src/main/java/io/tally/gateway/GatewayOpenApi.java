package io.tally.gateway;

import io.tally.common.OpenApiDocument;

/**
 * The gateway's contract (OpenAPI 3.1, openapi.json beside this class): served at /openapi.json,
 * and read by the routes (405's Allow), the refusals and the body parser (unknown fields), so it
 * has a home below all three.
 */
final class GatewayOpenApi {
    static final OpenApiDocument DOCUMENT = OpenApiDocument.load(GatewayOpenApi.class, "openapi.json");

    private GatewayOpenApi() {}
}
