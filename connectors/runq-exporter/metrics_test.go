package main

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/tally/runq-exporter/cgroups"
	"github.com/tally/runq-exporter/exporter"
)

func TestASamplesWaitCountsByWhoseTaskItDisplaced(t *testing.T) {
	m := newMetrics()
	m.sample(exporter.Sample{Container: "web", PrevContainer: "batch", Latency: 3 * time.Millisecond})
	m.sample(exporter.Sample{Container: "web", PrevContainer: "batch", Latency: 2 * time.Millisecond})
	m.sample(exporter.Sample{Container: "web", PrevContainer: "web", Latency: time.Millisecond})
	m.sample(exporter.Sample{Container: "web", PrevContainer: cgroups.System, Latency: 10 * time.Microsecond})
	m.sample(exporter.Sample{Container: "web", Latency: time.Second}) // procfs: no cause
	for cause, want := range map[string]float64{"other_container": 0.005, "same_container": 0.001, "system": 0.00001} {
		if got := testutil.ToFloat64(m.waited.WithLabelValues("web", cause)); got < want*0.999 || got > want*1.001 {
			t.Errorf("%s: waited %v s, want %v", cause, got, want)
		}
	}
	if n := testutil.CollectAndCount(m.waited); n != 3 {
		t.Errorf("%d wait series, want 3 (a sample with no cause has none)", n)
	}
	if n := testutil.CollectAndCount(m.runq); n != 1 {
		t.Errorf("%d latency series, want 1", n)
	}
	m.forget("web")
	if n := testutil.CollectAndCount(m.waited); n != 0 {
		t.Errorf("a gone container keeps %d wait series", n)
	}
}
