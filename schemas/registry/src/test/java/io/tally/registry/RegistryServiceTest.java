package io.tally.registry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.apache.avro.Schema;
import org.junit.jupiter.api.Test;

class RegistryServiceTest {
    static final String V1 = "{\"type\":\"record\",\"name\":\"R\",\"fields\":[{\"name\":\"a\",\"type\":\"string\"}]}";
    static final String V2_OPTIONAL =
            "{\"type\":\"record\",\"name\":\"R\",\"fields\":[{\"name\":\"a\",\"type\":\"string\"},"
                    + "{\"name\":\"b\",\"type\":\"int\",\"default\":0}]}";
    static final String V2_REQUIRED =
            "{\"type\":\"record\",\"name\":\"R\",\"fields\":[{\"name\":\"a\",\"type\":\"string\"},"
                    + "{\"name\":\"b\",\"type\":\"int\"}]}";
    static final String OTHER =
            "{\"type\":\"record\",\"name\":\"Other\",\"fields\":[{\"name\":\"x\",\"type\":\"long\"}]}";

    final InMemoryLog.Shared shared = new InMemoryLog.Shared();

    RegistryService instance() {
        RegistryState state = new RegistryState(CompatibilityLevel.BACKWARD);
        return new RegistryService(state, new InMemoryLog(shared, state), CompatibilityLevel.BACKWARD);
    }

    static Schema avro(String s) {
        return RegistryService.parse(null, s, false);
    }

    @Test
    void registrationIsIdempotentAndIdsAreGlobal() {
        RegistryService r = instance();
        int id = r.register("a-value", avro(V1));
        assertThat(r.register("a-value", avro(V1))).isEqualTo(id);
        assertThat(r.register("b-value", avro(V1)))
                .as("same schema, other subject: same id")
                .isEqualTo(id);
        assertThat(r.register("c-value", avro(OTHER))).isEqualTo(id + 1);
        assertThat(r.register("b-value", avro(V2_OPTIONAL))).isEqualTo(id + 2);
        assertThat(r.versions("a-value", false)).containsExactly(1);
        assertThat(r.versions("b-value", false)).containsExactly(1, 2);
    }

    @Test
    void backwardCompatibilityIsEnforced() {
        RegistryService r = instance();
        r.register("s", avro(V1));
        assertThatThrownBy(() -> r.register("s", avro(V2_REQUIRED))).isInstanceOfSatisfying(RegistryError.class, e -> {
            assertThat(e.status()).isEqualTo(409);
            assertThat(e.getMessage())
                    .contains("READER_FIELD_MISSING_DEFAULT_VALUE")
                    .contains("b");
        });
        assertThat(r.versions("s", false))
                .as("nothing stored for a rejected request")
                .containsExactly(1);
        assertThat(r.register("s", avro(V2_OPTIONAL))).isPositive();
    }

    @Test
    void levelsFollowConfluentSemantics() {
        RegistryService r = instance();
        r.setLevel("s", "NONE");
        r.register("s", avro(V1));
        r.register("s", avro(V2_REQUIRED)); // NONE allows anything
        r.setLevel("s", "forward");
        assertThat(r.subjectLevel("s", false)).isEqualTo(CompatibilityLevel.FORWARD);
        // FORWARD: the latest (V2 with a required b) must read data of the new schema
        assertThat(r.checkCompatibility("s", "latest", avro(V2_OPTIONAL))).isEmpty();
        assertThat(r.checkCompatibility("s", "latest", avro(V1)))
                .singleElement()
                .asString()
                .contains("READER_FIELD_MISSING_DEFAULT_VALUE");
        r.setLevel("s", "FULL_TRANSITIVE");
        // both directions against every version: V1 cannot read V2_REQUIRED's... fine, but V2_REQUIRED cannot read V1
        // data
        assertThat(r.checkCompatibility("s", null, avro(V2_REQUIRED))).isNotEmpty();
        assertThatThrownBy(() -> r.setLevel("s", "SIDEWAYS")).hasMessageContaining("Invalid compatibility level");
        assertThat(r.deleteLevel("s")).isEqualTo(CompatibilityLevel.FULL_TRANSITIVE);
        assertThatThrownBy(() -> r.subjectLevel("s", false))
                .isInstanceOfSatisfying(
                        RegistryError.class, e -> assertThat(e.errorCode()).isEqualTo(40408));
        assertThat(r.subjectLevel("s", true)).isEqualTo(CompatibilityLevel.BACKWARD);
    }

    @Test
    void softThenHardDelete() {
        RegistryService r = instance();
        int id = r.register("s", avro(V1));
        assertThatThrownBy(() -> r.deleteSubject("s", true))
                .isInstanceOfSatisfying(
                        RegistryError.class, e -> assertThat(e.errorCode()).isEqualTo(40405));
        assertThat(r.deleteSubject("s", false)).containsExactly(1);
        assertThatThrownBy(() -> r.versions("s", false))
                .isInstanceOfSatisfying(
                        RegistryError.class, e -> assertThat(e.errorCode()).isEqualTo(40401));
        assertThat(r.versions("s", true)).containsExactly(1);
        assertThatThrownBy(() -> r.deleteSubject("s", false))
                .isInstanceOfSatisfying(
                        RegistryError.class, e -> assertThat(e.errorCode()).isEqualTo(40404));
        assertThat(r.schemaById(id)).isNotNull(); // soft-deleted schemas still decode old data
        assertThat(r.deleteSubject("s", true)).containsExactly(1);
        assertThat(r.subjects(true)).isEmpty();
        assertThatThrownBy(() -> r.schemaById(id))
                .isInstanceOfSatisfying(
                        RegistryError.class, e -> assertThat(e.errorCode()).isEqualTo(40403));
        assertThat(r.register("s", avro(OTHER))).as("ids are never reused").isGreaterThan(id);
    }

    @Test
    void unknownThingsGiveTheirOwnCodes() {
        RegistryService r = instance();
        r.register("s", avro(V1));
        assertThatThrownBy(() -> r.version("nope", "1", false))
                .isInstanceOfSatisfying(
                        RegistryError.class, e -> assertThat(e.errorCode()).isEqualTo(40401));
        assertThatThrownBy(() -> r.version("s", "7", false))
                .isInstanceOfSatisfying(
                        RegistryError.class, e -> assertThat(e.errorCode()).isEqualTo(40402));
        assertThatThrownBy(() -> r.version("s", "x", false))
                .isInstanceOfSatisfying(
                        RegistryError.class, e -> assertThat(e.errorCode()).isEqualTo(42202));
        assertThatThrownBy(() -> r.schemaById(999))
                .isInstanceOfSatisfying(
                        RegistryError.class, e -> assertThat(e.errorCode()).isEqualTo(40403));
        assertThatThrownBy(() -> r.lookup("s", avro(OTHER), false))
                .isInstanceOfSatisfying(
                        RegistryError.class, e -> assertThat(e.errorCode()).isEqualTo(40403));
        assertThatThrownBy(() -> RegistryService.parse(null, "{\"type\":\"recrod\"}", false))
                .isInstanceOfSatisfying(
                        RegistryError.class, e -> assertThat(e.errorCode()).isEqualTo(42201));
        assertThatThrownBy(() -> RegistryService.parse("PROTOBUF", "syntax = \"proto3\";", false))
                .isInstanceOfSatisfying(
                        RegistryError.class, e -> assertThat(e.getMessage()).contains("AVRO only"));
    }

    @Test
    void aLostRaceIsRetriedAndNoIdIsHandedOutTwice() {
        RegistryService a = instance();
        RegistryService b = instance();
        a.register("seed", avro(V1));
        b.state(); // b has not read anything yet
        InMemoryLog aLog = logOf(a);
        // While a is about to append its claim for the next id, b claims that same id first.
        aLog.beforeNextAppend = () -> b.register("b-subject", avro(OTHER));
        int aId = a.register("a-subject", avro(V2_REQUIRED));
        int bId = b.register("b-subject", avro(OTHER));
        assertThat(aId).isNotEqualTo(bId);
        logOf(b).syncToEnd();
        for (RegistryService r : new RegistryService[] {a, b}) {
            assertThat(r.schemaById(aId)).isEqualTo(avro(V2_REQUIRED).toString());
            assertThat(r.schemaById(bId)).isEqualTo(avro(OTHER).toString());
        }
        assertThat(a.state().ignoredRecords()).isEqualTo(1);
        assertThat(b.state().ignoredRecords()).isEqualTo(1);
    }

    @Test
    void replayingTheLogRebuildsTheSameState() {
        RegistryService r = instance();
        int id1 = r.register("s", avro(V1));
        int id2 = r.register("s", avro(V2_OPTIONAL));
        r.setLevel(null, "FULL");
        r.deleteVersion("s", "1", false);
        RegistryService fresh = instance();
        logOf(fresh).syncToEnd();
        assertThat(fresh.versions("s", true)).containsExactly(1, 2);
        assertThat(fresh.versions("s", false)).containsExactly(2);
        assertThat(fresh.schemaById(id1)).isEqualTo(r.schemaById(id1));
        assertThat(fresh.lookup("s", avro(V2_OPTIONAL), false).id()).isEqualTo(id2);
        assertThat(fresh.globalLevel()).isEqualTo(CompatibilityLevel.FULL);
    }

    private static InMemoryLog logOf(RegistryService r) {
        try {
            var f = RegistryService.class.getDeclaredField("log");
            f.setAccessible(true);
            return (InMemoryLog) f.get(r);
        } catch (ReflectiveOperationException e) {
            throw new AssertionError(e);
        }
    }
}
