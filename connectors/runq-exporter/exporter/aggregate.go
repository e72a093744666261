// Package exporter turns run-queue samples into Tally events: a sample becomes a
// TimeSeriesEvent of sched.runq, and preemptions (switch-outs of a still-runnable task) are
// counted per (container, cause) and flushed each interval as CounterEvent deltas of
// sched.switchout, with idempotency tokens that a retried flush repeats exactly.
package exporter

import (
	"fmt"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/tally/runq-exporter/cgroups"
	"github.com/tally/runq-exporter/contract"
	"github.com/tally/runq-exporter/sink"
)

const (
	RunqNamespace      = contract.RunqNamespace
	SwitchOutNamespace = contract.SwitchOutNamespace
	Source             = "runq-exporter"
)

// Sample is what a source (BPF or procfs) observed, already in wall-clock time.
type Sample struct {
	Container     string // the task that waited, then got the CPU
	Runtime       string // what made its container (cgroups.Rule.Runtime; "" for system)
	PrevContainer string // the task it displaced ("" when the CPU was idle or the source cannot tell)
	Latency       time.Duration
	At            time.Time
	ID            string // unique per sample (source-specific)
}

// Aggregator keeps the switch-out counts of the current interval.
type Aggregator struct {
	Host   string
	mu     sync.Mutex
	counts map[[2]string]int64
}

func NewAggregator(host string) *Aggregator {
	return &Aggregator{Host: host, counts: map[[2]string]int64{}}
}

// Observe returns the sample's TimeSeriesEvent, which names the task it displaced when the
// source can tell (prev_container, and the cause as the displaced one would see it).
func (a *Aggregator) Observe(s Sample) sink.TimeSeriesEvent {
	items := []sink.EventItem{{Key: "runq_lat_us", Value: []byte(strconv.FormatInt(s.Latency.Microseconds(), 10))}}
	if s.PrevContainer != "" {
		items = append(items, sink.EventItem{Key: "prev_container", Value: []byte(s.PrevContainer)},
			sink.EventItem{Key: "cause", Value: []byte(cgroups.Cause(s.Container, s.PrevContainer))})
	}
	return sink.TimeSeriesEvent{Namespace: RunqNamespace, TimeSeriesID: a.Host + "/" + s.Container,
		EventTime: s.At.UTC().Truncate(time.Microsecond), EventID: s.ID, Items: items, Source: Source}
}

// Preempted counts n preemptions of the victim container's tasks by the taker's: the
// victim's switch-outs, with the cause its taker makes (system tasks' own are not counted).
func (a *Aggregator) Preempted(victim, taker string, n int64) {
	if victim == cgroups.System || n <= 0 {
		return
	}
	a.mu.Lock()
	a.counts[[2]string{victim, cgroups.Cause(victim, taker)}] += n
	a.mu.Unlock()
}

// Flush returns the interval's switch-out deltas, stamped with its end; the event id names
// host, counter and interval, so re-sending a flush is deduplicated downstream.
func (a *Aggregator) Flush(end time.Time) []sink.CounterEvent {
	a.mu.Lock()
	counts := a.counts
	a.counts = map[[2]string]int64{}
	a.mu.Unlock()
	at := end.UTC().Truncate(time.Microsecond)
	out := make([]sink.CounterEvent, 0, len(counts))
	for k, n := range counts {
		counter := a.Host + "/" + k[0] + "/" + k[1]
		out = append(out, sink.CounterEvent{Namespace: SwitchOutNamespace, Counter: counter, Op: "ADD", Delta: n,
			EventTime: at, EventID: fmt.Sprintf("%s@%d", counter, at.UnixMicro()), Source: Source})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Counter < out[j].Counter })
	return out
}
