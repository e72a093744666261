package io.tally.model;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class KeyPartsTest {
    @Test
    void plainIdsJoinPlainly() {
        assertThat(KeyParts.join("video_views", "c1", "tok-1")).isEqualTo("video_views/c1/tok-1");
    }

    @Test
    void idsHoldingTheSeparatorNeverMeet() {
        assertThat(KeyParts.join("ns", "x/1", "t")).isNotEqualTo(KeyParts.join("ns", "x", "1/t"));
        assertThat(KeyParts.join("ns", "x%2F1", "t")).isNotEqualTo(KeyParts.join("ns", "x/1", "t"));
        assertThat(KeyParts.join("ns", "a%", "b")).isNotEqualTo(KeyParts.join("ns", "a", "%b"));
    }
}
