package main

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/tally/runq-exporter/cgroups"
	"github.com/tally/runq-exporter/exporter"
)

// The exporter's Prometheus metrics (names from docs/design.md).
type metrics struct {
	runq      *prometheus.HistogramVec
	switchOut *prometheus.CounterVec
	waited    *prometheus.CounterVec
	drops     *prometheus.CounterVec
	events    *prometheus.CounterVec
	registry  *prometheus.Registry
}

func newMetrics() *metrics {
	m := &metrics{
		runq: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "tally_runq_latency_seconds",
			Help:    "Run-queue latency per container (sampled); runtime: what made it (tally, docker, containerd, cri-o, podman, kubernetes, systemd; empty for system)",
			Buckets: prometheus.ExponentialBuckets(1e-6, 4, 12)},
			[]string{"container", "runtime"}),
		switchOut: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "tally_sched_switch_out_total",
			Help: "Preemptions of a container's tasks (switched out while still runnable), by the cause: the container that got the CPU (same_container, other_container, system); all of them, counted in BPF"}, []string{"container", "cause"}),
		waited: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "tally_runq_wait_seconds_total",
			Help: "Run-queue wait of a container's sampled wake-ups, by whose task it displaced when the wait ended (same_container, other_container, system; none when the CPU was idle); a task that sleeps between short bursts is seldom preempted, so this, not switch-outs, shows it queueing behind a neighbor"}, []string{"container", "cause"}),
		drops: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "tally_runq_exporter_drops_total",
			Help: "Samples not exported: rate_limited and ringbuf_full (in BPF), export_rate (over --export-rate; still in the metrics), kafka_full and kafka (produce failed)"}, []string{"reason"}),
		events: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "tally_runq_exporter_events_total",
			Help: "Records produced to Kafka, by topic"}, []string{"topic"}),
		registry: prometheus.NewRegistry(),
	}
	m.registry.MustRegister(m.runq, m.switchOut, m.waited, m.drops, m.events,
		prometheus.NewGoCollector(), prometheus.NewProcessCollector(prometheus.ProcessCollectorOpts{}))
	return m
}

// sample records a run-queue sample: its latency, and its wait by the cause that ended it
// when the source can tell (BPF; procfs cannot).
func (m *metrics) sample(s exporter.Sample) {
	m.runq.WithLabelValues(s.Container, s.Runtime).Observe(s.Latency.Seconds())
	if s.PrevContainer != "" {
		m.waited.WithLabelValues(s.Container, cgroups.Cause(s.Container, s.PrevContainer)).Add(s.Latency.Seconds())
	}
}

// forget deletes a gone container's series (exporter.SeriesAges says which are gone).
func (m *metrics) forget(container string) {
	m.runq.DeletePartialMatch(prometheus.Labels{"container": container})
	m.switchOut.DeletePartialMatch(prometheus.Labels{"container": container})
	m.waited.DeletePartialMatch(prometheus.Labels{"container": container})
}
