package io.tally.gateway.service;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class TableCatalogueTest {
    @Test
    void aKeyspacesListIsAskedOnceAPeriodAndThenAgain() {
        AtomicLong nanos = new AtomicLong();
        AtomicInteger asked = new AtomicInteger();
        Set<String> inCassandra = new HashSet<>(Set.of("events_20261203"));
        TableCatalogue catalogue = new TableCatalogue(
                ks -> {
                    asked.incrementAndGet();
                    return ks.equals("ns_playback") ? inCassandra : Set.of();
                },
                2_000,
                nanos::get);
        assertThat(catalogue.tablesOf("ns_playback")).containsExactly("events_20261203");
        inCassandra.add("events_20261204"); // made since: not seen within the period
        assertThat(catalogue.tablesOf("ns_playback")).doesNotContain("events_20261204");
        assertThat(catalogue.tablesOf("ns_other")).isEmpty();
        assertThat(asked.get()).isEqualTo(2); // once per keyspace
        nanos.addAndGet(2_000);
        assertThat(catalogue.tablesOf("ns_playback")).contains("events_20261204");
        assertThat(asked.get()).isEqualTo(3);
    }
}
