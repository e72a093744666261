package io.tally.common;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Base64;

/**
 * The admin token that guards the control-plane writes of Tally's servers (namespace admin,
 * Recount, registry writes and deletes). Taken as {@code Authorization: Bearer <token>} or, for
 * Confluent clients that only speak HTTP Basic ({@code basic.auth.user.info}), as the password of
 * any user. Compared in constant time, so it cannot be guessed byte by byte. A server started
 * without a token (a jar started by hand, a container without its secret) refuses every admin
 * call, unless its operator opened them explicitly ({@code admin.open}): a forgotten secret must
 * not leave namespace deletes open to anyone who reaches the port.
 */
public final class AdminToken {
    private final byte[] token;
    private final boolean openWithoutToken;

    /** A token (empty or null: none, so every admin call is refused). */
    public AdminToken(String token) {
        this(token, false);
    }

    /** @param openWithoutToken with no token, permit every call (only an explicit setting does this) */
    public AdminToken(String token, boolean openWithoutToken) {
        this.token = token == null || token.isEmpty() ? null : token.getBytes(StandardCharsets.UTF_8);
        this.openWithoutToken = openWithoutToken;
    }

    /** Whether a token is set (else every admin call is refused, or all are open). */
    public boolean configured() {
        return token != null;
    }

    /** Whether an Authorization header value (null when absent) carries the token. */
    public boolean permits(String authorization) {
        if (token == null) {
            return openWithoutToken;
        }
        return MessageDigest.isEqual(presented(authorization), token);
    }

    /** Why a call was refused, for the 401's message: no token set at all, or not the token. */
    public String refusal(String tokenSetting, String openSetting) {
        return token == null
                ? "admin calls are closed: this server has no admin token (set " + tokenSetting + ", or " + openSetting
                        + "=true to leave them open)"
                : null;
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
