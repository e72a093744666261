package io.tally.common;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Base64;

/**
 * The admin token that guards the control-plane writes of Tally's servers (namespace admin,
 * Recount, registry writes and deletes). Taken as {@code Authorization: Bearer <token>} or, for
 * Confluent clients that only speak HTTP Basic ({@code basic.auth.user.info}), as the password of
 * any user. Compared in constant time, so it cannot be guessed byte by byte. Empty: open (only
 * for a server started by hand; {@code ./tally up} always sets one).
 */
public final class AdminToken {
    private final byte[] token;

    public AdminToken(String token) {
        this.token = token == null || token.isEmpty() ? null : token.getBytes(StandardCharsets.UTF_8);
    }

    public boolean required() {
        return token != null;
    }

    /** Whether an Authorization header value (null when absent) carries the token. */
    public boolean permits(String authorization) {
        if (token == null) {
            return true;
        }
        return MessageDigest.isEqual(presented(authorization), token);
    }

    private static byte[] presented(String h) {
        if (h == null) {
            return new byte[0];
        }
        String v = h.trim();
        if (v.regionMatches(true, 0, "Bearer ", 0, 7)) {
            return v.substring(7).trim().getBytes(StandardCharsets.UTF_8);
        }
        if (v.regionMatches(true, 0, "Basic ", 0, 6)) {
            try {
                String userPass =
                        new String(Base64.getDecoder().decode(v.substring(6).trim()), StandardCharsets.UTF_8);
                int colon = userPass.indexOf(':');
                return colon < 0 ? new byte[0] : userPass.substring(colon + 1).getBytes(StandardCharsets.UTF_8);
            } catch (IllegalArgumentException e) {
                return new byte[0];
            }
        }
        return new byte[0];
    }
}
