package io.tally.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class MicrosTest {
    @Test
    void readsTheUsualUtcFormLikeInstantParse() {
        Random random = new Random(42);
        for (int i = 0; i < 20_000; i++) {
            long micros = Math.floorMod(random.nextLong(), 253_402_300_799_000_000L); // up to 9999-12-31
            Instant t = Micros.toInstant(micros).plusNanos(random.nextInt(1000));
            List.of(t.toString(), withDigits(t, 1 + random.nextInt(9))).forEach(MicrosTest::readAsInstantParseDoes);
        }
    }

    @Test
    void writesAnInstantAsInstantToStringDoes() {
        Random random = new Random(7);
        List<Long> micros = new java.util.ArrayList<>(List.of(
                0L,
                1L,
                999L,
                1000L,
                1_000_000L,
                86_399_999_999L,
                951_782_400_000_000L, // 2000-02-29
                253_402_300_799_999_999L,
                253_402_300_800_000_000L,
                -1L,
                -1_000_000L,
                Long.MIN_VALUE,
                Long.MAX_VALUE));
        for (int i = 0; i < 20_000; i++) {
            long m = Math.floorMod(random.nextLong(), 253_402_300_800_000_000L);
            micros.add(m);
            micros.add(m - m % 1_000_000L); // whole seconds
            micros.add(m - m % 1000L); // whole milliseconds
        }
        for (long m : micros) {
            assertThat(Micros.format(m))
                    .as("%d", m)
                    .isEqualTo(Micros.toInstant(m).toString());
        }
    }

    @Test
    void leavesEveryOtherFormToInstantParse() {
        List.of(
                        "2024-10-03T21:24:23+02:00",
                        "2024-10-03t21:24:23.5z",
                        "2016-12-31T23:59:60Z",
                        "2024-10-03T24:00:00Z",
                        "2024-10-03T21:24:23.Z",
                        "1969-12-31T23:59:59.999999Z",
                        "+12024-01-01T00:00:00Z")
                .forEach(MicrosTest::readAsInstantParseDoes);
    }

    private static void readAsInstantParseDoes(String text) {
        assertThat(Micros.parse(text)).as(text).isEqualTo(Micros.of(Instant.parse(text)));
    }

    @Test
    void refusesWhatInstantParseRefuses() {
        for (String text : List.of(
                "2024-02-30T00:00:00Z",
                "2023-02-29T00:00:00Z",
                "2024-13-01T00:00:00Z",
                "2024-10-03T21:60:00Z",
                "2024-10-03T21:24:23.1234567890Z",
                "2024-10-03 21:24:23Z",
                "2024-1a-03T21:24:23Z",
                "2024-10-03T21:24:23",
                "")) {
            assertThatThrownBy(() -> Micros.parse(text)).as(text).isInstanceOf(DateTimeParseException.class);
            assertThatThrownBy(() -> Instant.parse(text)).as(text).isInstanceOf(DateTimeParseException.class);
        }
    }

    private static String withDigits(Instant t, int digits) {
        String s = t.toString();
        String base = s.substring(0, 19);
        String nanos = String.format("%09d", t.getNano());
        return base + "." + nanos.substring(0, digits) + "Z";
    }
}
