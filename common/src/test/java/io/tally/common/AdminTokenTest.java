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
        assertThat(t.configured()).isTrue();
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
    void withoutATokenEverythingIsRefusedUnlessOpenedExplicitly() {
        for (String none : new String[] {"", null}) {
            AdminToken closed = new AdminToken(none);
            assertThat(closed.configured()).isFalse();
            assertThat(closed.permits(null)).isFalse();
            assertThat(closed.permits("Bearer ")).isFalse();
            assertThat(closed.permits(basic("admin:"))).isFalse();
            assertThat(closed.refusal("TALLY_X_ADMIN_TOKEN", "TALLY_X_ADMIN_OPEN"))
                    .contains("TALLY_X_ADMIN_TOKEN", "TALLY_X_ADMIN_OPEN=true");
        }
        AdminToken open = new AdminToken("", true);
        assertThat(open.permits(null)).isTrue();
        assertThat(new AdminToken("s3cret", true).permits(null)).isFalse(); // a token always counts
        assertThat(new AdminToken("s3cret").refusal("A", "B")).isNull();
    }
}
