package exporter

import (
	"sync"
	"time"
)

// SeriesAges remembers when each container last had a sample or a switch-out, so the exporter
// can delete the Prometheus series of containers that are gone. A host runs containers by the
// thousand over its life (every pod, every CI job); a histogram of 13 buckets per container kept
// forever grows the exporter's memory and every scrape, and Prometheus keeps serving stale
// series as if the container were still there.
type SeriesAges struct {
	TTL  time.Duration
	mu   sync.Mutex
	last map[string]time.Time
}

func NewSeriesAges(ttl time.Duration) *SeriesAges {
	return &SeriesAges{TTL: ttl, last: map[string]time.Time{}}
}

// Seen notes that the container's series were updated at the given time.
func (a *SeriesAges) Seen(container string, at time.Time) {
	a.mu.Lock()
	if at.After(a.last[container]) {
		a.last[container] = at
	}
	a.mu.Unlock()
}

// Expired removes and returns the containers not seen for longer than TTL.
func (a *SeriesAges) Expired(now time.Time) []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	var gone []string
	for c, at := range a.last {
		if now.Sub(at) > a.TTL {
			gone = append(gone, c)
			delete(a.last, c)
		}
	}
	return gone
}
