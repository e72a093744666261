package exporter

import (
	"testing"
	"time"

	"github.com/tally/runq-exporter/cgroups"
)

func TestObserveMakesARunqEventAndPreemptionsAreCountedByCause(t *testing.T) {
	a := NewAggregator("h1")
	at := time.Unix(1_795_000_000, 123_456_789)
	ev := a.Observe(Sample{Container: "web", PrevContainer: "batch", Latency: 2500 * time.Microsecond, At: at, ID: "s1"})
	if ev.Namespace != RunqNamespace || ev.TimeSeriesID != "h1/web" || ev.EventID != "s1" {
		t.Fatalf("%+v", ev)
	}
	if !ev.EventTime.Equal(at.Truncate(time.Microsecond)) {
		t.Fatalf("time %v", ev.EventTime)
	}
	items := map[string]string{}
	for _, it := range ev.Items {
		items[it.Key] = string(it.Value)
	}
	if items["runq_lat_us"] != "2500" || items["prev_container"] != "batch" || items["cause"] != "other_container" {
		t.Fatalf("items %v", items)
	}
	if len(a.Flush(at)) != 0 {
		t.Fatal("a sample counted a switch-out: only preemptions are counted")
	}
	a.Preempted("batch", "web", 2)
	a.Preempted("batch", "batch", 1)
	a.Preempted("batch", cgroups.System, 1)
	a.Preempted(cgroups.System, "web", 5) // system's own are not counted
	end := time.Unix(1_795_000_001, 0)
	got := map[string]int64{}
	for _, c := range a.Flush(end) {
		got[c.Counter] = c.Delta
		if c.Namespace != SwitchOutNamespace || !c.EventTime.Equal(end) || c.EventID != c.Counter+"@1795000001000000" {
			t.Fatalf("%+v", c)
		}
	}
	want := map[string]int64{"h1/batch/other_container": 2, "h1/batch/same_container": 1, "h1/batch/system": 1}
	if len(got) != len(want) {
		t.Fatalf("got %v", got)
	}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
	if len(a.Flush(end.Add(time.Second))) != 0 {
		t.Fatal("a flush starts a new interval")
	}
}

func TestProcfsSamplesHaveNoCause(t *testing.T) {
	a := NewAggregator("h1")
	ev := a.Observe(Sample{Container: "web", Latency: time.Millisecond, At: time.Now(), ID: "p"})
	if len(ev.Items) != 1 || len(a.Flush(time.Now())) != 0 {
		t.Fatalf("%+v", ev)
	}
}
