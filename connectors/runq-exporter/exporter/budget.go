package exporter

import (
	"sync"
	"time"
)

// ExportBudget decides which samples become sched.runq events: at most Rate a second per
// container (a token bucket holding one second's worth). The BPF rate limit bounds samples per
// cgroup per CPU, which is right for the metrics (they see every sample) but too many events for
// a host whose every server is a container: the stack's fourteen components at 100 samples/s per
// CPU would put thousands of events a second into the TimeSeries path. Rate 0 exports them all.
type ExportBudget struct {
	Rate    float64
	mu      sync.Mutex
	buckets map[string]*bucket
}

type bucket struct {
	tokens float64
	last   time.Time
}

func NewExportBudget(rate float64) *ExportBudget {
	return &ExportBudget{Rate: rate, buckets: map[string]*bucket{}}
}

// Allow takes a token of the container's bucket if it has one.
func (b *ExportBudget) Allow(container string, now time.Time) bool {
	if b.Rate <= 0 {
		return true
	}
	burst := b.Rate
	if burst < 1 {
		burst = 1
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	k, ok := b.buckets[container]
	if !ok {
		k = &bucket{tokens: burst, last: now}
		b.buckets[container] = k
	}
	if d := now.Sub(k.last); d > 0 {
		k.tokens += d.Seconds() * b.Rate
		if k.tokens > burst {
			k.tokens = burst
		}
		k.last = now
	}
	if k.tokens < 1 {
		return false
	}
	k.tokens--
	return true
}

// Forget drops buckets idle for longer than a full refill (containers that are gone), so the
// map does not grow with every container a host ever ran.
func (b *ExportBudget) Forget(now time.Time) {
	if b.Rate <= 0 {
		return
	}
	idle := time.Duration(float64(time.Second) * (1 + 1/b.Rate))
	b.mu.Lock()
	defer b.mu.Unlock()
	for c, k := range b.buckets {
		if now.Sub(k.last) > idle {
			delete(b.buckets, c)
		}
	}
}
