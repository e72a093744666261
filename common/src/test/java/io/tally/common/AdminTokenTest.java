package io.tally.common;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import org.junit.jupiter.api.Test;

class AdminTokenTest {
    static String basic(String userPass) {
        return "Basic " + Base64.getEncoder().encodeToString(userPass.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void bearerOrBasicPasswordCarryTheToken() {
        AdminToken t = new AdminToken("s3cret");
        assertThat(t.required()).isTrue();
        assertThat(t.permits("Bearer s3cret")).isTrue();
        assertThat(t.permits("bearer  s3cret ")).isTrue();
        assertThat(t.permits(basic("admin:s3cret"))).isTrue();
        assertThat(t.permits(basic(":s3cret"))).isTrue();
    }

    @Test
    void anythingElseIsRefused() {
        AdminToken t = new AdminToken("s3cret");
        for (String h : new String[] {
            null,
            "",
            "s3cret",
            "Bearer",
            "Bearer s3cre",
            "Bearer s3cretX",
            basic("s3cret"),
            basic("s3cret:x"),
            "Basic !!"
        }) {
            assertThat(t.permits(h)).as(String.valueOf(h)).isFalse();
        }
    }

    @Test
    void withoutATokenEverythingIsPermitted() {
        AdminToken open = new AdminToken("");
        assertThat(open.required()).isFalse();
        assertThat(open.permits(null)).isTrue();
    }
}
