package exporter

import (
	"testing"
	"time"
)

func allowed(b *ExportBudget, container string, from time.Time, n int, every time.Duration) int {
	got := 0
	for i := 0; i < n; i++ {
		if b.Allow(container, from.Add(time.Duration(i)*every)) {
			got++
		}
	}
	return got
}

func TestTheBudgetPassesRatePerSecondPerContainer(t *testing.T) {
	b := NewExportBudget(10)
	t0 := time.Unix(1000, 0)
	// 1,000 samples/s for 10 s: one second's burst, then 10/s
	if got := allowed(b, "kafka", t0, 10000, time.Millisecond); got < 100 || got > 111 {
		t.Fatalf("kafka: %d events from 10 s at 1,000 samples/s, want 10/s (+ a burst of 10)", got)
	}
	// another container has its own bucket
	if got := allowed(b, "cassandra", t0, 10, time.Millisecond); got != 10 {
		t.Fatalf("cassandra: %d of its first 10 samples, want all (its own burst)", got)
	}
}

func TestASlowContainerExportsEverySample(t *testing.T) {
	b := NewExportBudget(10)
	if got := allowed(b, "registry", time.Unix(1000, 0), 50, 200*time.Millisecond); got != 50 {
		t.Fatalf("%d of 50 samples at 5/s, want all", got)
	}
}

func TestRateZeroExportsEverything(t *testing.T) {
	b := NewExportBudget(0)
	if got := allowed(b, "kafka", time.Unix(1000, 0), 1000, time.Microsecond); got != 1000 {
		t.Fatalf("%d of 1000, want all", got)
	}
}

func TestAFractionalRateStillPassesOneSample(t *testing.T) {
	b := NewExportBudget(0.5) // one every two seconds
	if got := allowed(b, "kafka", time.Unix(1000, 0), 100, 100*time.Millisecond); got < 5 || got > 6 {
		t.Fatalf("%d events in 10 s at 0.5/s, want 5 (+1)", got)
	}
}

func TestForgetDropsIdleContainers(t *testing.T) {
	b := NewExportBudget(10)
	t0 := time.Unix(1000, 0)
	b.Allow("gone", t0)
	b.Allow("busy", t0.Add(5*time.Second))
	b.Forget(t0.Add(5 * time.Second))
	if _, ok := b.buckets["gone"]; ok {
		t.Fatal("an idle container's bucket is kept")
	}
	if _, ok := b.buckets["busy"]; !ok {
		t.Fatal("a busy container's bucket is dropped")
	}
}
