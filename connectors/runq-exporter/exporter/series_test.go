package exporter

import (
	"testing"
	"time"
)

func TestSeriesOfAContainerUnseenForTheTTLExpireOnce(t *testing.T) {
	a := NewSeriesAges(10 * time.Minute)
	t0 := time.Unix(1000, 0)
	a.Seen("gone", t0)
	a.Seen("busy", t0)
	a.Seen("busy", t0.Add(9*time.Minute))
	a.Seen("busy", t0.Add(time.Minute)) // a late sample does not make it older
	if got := a.Expired(t0.Add(10 * time.Minute)); len(got) != 0 {
		t.Fatalf("expired at exactly the TTL: %v", got)
	}
	got := a.Expired(t0.Add(11 * time.Minute))
	if len(got) != 1 || got[0] != "gone" {
		t.Fatalf("expired after 11 min: %v, want [gone]", got)
	}
	if got := a.Expired(t0.Add(12 * time.Minute)); len(got) != 0 {
		t.Fatalf("expired twice: %v", got)
	}
	if got := a.Expired(t0.Add(20 * time.Minute)); len(got) != 1 || got[0] != "busy" {
		t.Fatalf("busy after 11 min without samples: %v", got)
	}
}
