package io.tally.model;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class BytesTest {
    @Test
    void copiesFromThePositionWithoutMovingIt() {
        ByteBuffer b = ByteBuffer.wrap("xhello".getBytes(StandardCharsets.UTF_8));
        b.position(1);
        assertThat(Bytes.utf8(b)).isEqualTo("hello");
        assertThat(Bytes.of(b)).isEqualTo("hello".getBytes(StandardCharsets.UTF_8));
        assertThat(b.position()).as("a second read sees it whole").isEqualTo(1);
    }

    @Test
    void nullIsEmpty() {
        assertThat(Bytes.of(null)).isEmpty();
    }
}
