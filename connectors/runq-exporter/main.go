// Command runq-exporter measures run-queue latency per container with eBPF (or /proc as a
// fallback) and streams it into Tally's topics: samples as TimeSeriesEvents of sched.runq,
// switch-outs by cause as CounterEvents of sched.switchout. See README.md.
package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log"
	"net/http"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/twmb/franz-go/pkg/kgo"
	"golang.org/x/sys/unix"

	"github.com/tally/runq-exporter/cgroups"
	"github.com/tally/runq-exporter/contract"
	"github.com/tally/runq-exporter/exporter"
	"github.com/tally/runq-exporter/kafkasec"
	"github.com/tally/runq-exporter/procfs"
	"github.com/tally/runq-exporter/runq"
	"github.com/tally/runq-exporter/sink"
)

const (
	timeseriesTopic = contract.TimeSeriesEventsTopic
	counterTopic    = contract.CounterEventsTopic
)

func bytesReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }

func main() {
	// One P unless GOMAXPROCS says otherwise: the exporter's work is a few hundred samples a
	// second, and with a P per CPU every wake-up also woke an idle P's thread to look for work.
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(1)
	}
	cfg, err := loadConfig(os.Args[1:])
	if err != nil {
		log.Fatalf("config: %v", err)
	}
	if err := run(cfg); err != nil {
		if errors.Is(err, runq.ErrNotSupported) {
			log.Printf("%v", err)
			log.Fatalf("not supported: use --source procfs where BPF is not allowed")
		}
		log.Fatalf("%v", err)
	}
}

// maxBufferedRecords bounds the samples waiting for Kafka (about 2 MB at ~200 B each); past it
// samples are dropped and counted as kafka_full.
const maxBufferedRecords = 10000

// dropReason names why a sample did not reach Kafka ("" when it did): kafka_full when the
// producer's buffer was full, kafka for any other failure.
func dropReason(err error) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, kgo.ErrMaxBuffered):
		return "kafka_full"
	default:
		return "kafka"
	}
}

func run(cfg Config) error {
	m := newMetrics()
	mount := cfg.CgroupMount
	if mount == "" {
		var err error
		if mount, err = cgroups.DetectMount(); err != nil {
			return err
		}
	}
	rules, err := cgroups.ParseRules(cfg.Containers, cfg.ContainerRoot, cfg.ContainerRegex)
	if err != nil {
		return err
	}
	resolver := cgroups.NewResolver(mount, rules)
	if err := resolver.Refresh(); err != nil {
		return fmt.Errorf("reading cgroups at %s: %w", mount, err)
	}

	// Open the source first: an unsupported kernel fails before anything else starts.
	var bpf *runq.Source
	if cfg.Source == "bpf" {
		var err error
		if bpf, err = runq.Open(runq.Options{RateLimit: cfg.RateLimit, TrackPreempted: cfg.TrackPreempted, ReadInterval: cfg.ReadInterval}); err != nil {
			return err
		}
		defer bpf.Close()
	}
	tsEnc, err := sink.LatestEncoder(cfg.Registry, timeseriesTopic)
	if err != nil {
		return err
	}
	ctEnc, err := sink.LatestEncoder(cfg.Registry, counterTopic)
	if err != nil {
		return err
	}
	// samples arrive in bursts every read interval: a linger as long makes one request of a burst
	security, err := kafkasec.FromEnv(os.Getenv)
	if err != nil {
		return err
	}
	secured, err := security.Opts()
	if err != nil {
		return err
	}
	log.Printf("Kafka at %s: %s", cfg.Kafka, security)
	client, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(strings.Split(cfg.Kafka, ",")...),
		kgo.ProducerLinger(100 * time.Millisecond), kgo.RecordDeliveryTimeout(30 * time.Second),
		kgo.MaxBufferedRecords(maxBufferedRecords)}, secured...)...)
	if err != nil {
		return err
	}
	defer client.Close()

	srv := &http.Server{
		Addr:    cfg.MetricsAddr,
		Handler: promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{}),
		// a client that opens a connection and sends nothing (or reads nothing) is cut off
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       60 * time.Second,
	}
	go func() {
		if err := srv.ListenAndServe(); err != nil && err != http.ErrServerClosed {
			log.Fatalf("metrics: %v", err)
		}
	}()

	agg := exporter.NewAggregator(cfg.Host)
	budget := exporter.NewExportBudget(cfg.ExportRate)
	ages := exporter.NewSeriesAges(cfg.SeriesTTL)
	produce := func(topic, key string, enc *sink.Encoder, v any) {
		b, err := enc.Encode(v)
		if err != nil {
			m.drops.WithLabelValues("encode").Inc()
			return
		}
		if cfg.NoKafka {
			m.events.WithLabelValues(topic).Inc()
			return
		}
		// TryProduce never blocks: with the producer's buffer full (Kafka slower than the samples,
		// or down) a sample is dropped and counted, so the BPF reader and SIGTERM are never stuck.
		client.TryProduce(context.Background(), &kgo.Record{Topic: topic, Key: []byte(key), Value: b}, func(_ *kgo.Record, err error) {
			if reason := dropReason(err); reason != "" {
				m.drops.WithLabelValues(reason).Inc()
				return
			}
			m.events.WithLabelValues(topic).Inc()
		})
	}
	observe := func(s exporter.Sample) {
		m.sample(s)
		ages.Seen(s.Container, s.At)
		ev := agg.Observe(s)
		if s.Container == cgroups.System && !cfg.ExportSystem {
			return
		}
		if !budget.Allow(s.Container, s.At) {
			m.drops.WithLabelValues("export_rate").Inc()
			return
		}
		produce(timeseriesTopic, ev.Namespace+"/"+ev.TimeSeriesID, tsEnc, ev)
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	var running atomic.Bool
	running.Store(true)
	if bpf != nil {
		offset := bootOffset()
		go func() {
			for running.Load() {
				s, err := bpf.Read()
				if err != nil {
					return // closed
				}
				container, runtime := resolver.Resolve(s.CgroupID)
				prev := "" // 0: the CPU was idle, the wait displaced no one
				if s.PrevCgroupID != 0 {
					prev, _ = resolver.Resolve(s.PrevCgroupID)
				}
				observe(exporter.Sample{Container: container, Runtime: runtime, PrevContainer: prev,
					Latency: s.Latency, At: time.Unix(0, int64(s.BootTimeNs)+offset), ID: fmt.Sprintf("%d-%d", s.CgroupID, s.BootTimeNs)})
			}
		}()
	}
	scanner := procfs.NewScanner("/proc")
	if cfg.Source == "procfs" {
		scanner.Scan() // the baseline
	}
	log.Printf("runq-exporter: source %s, cgroups at %s, containers by %s, metrics on http://%s/metrics",
		cfg.Source, mount, rules, cfg.MetricsAddr)

	tick := time.NewTicker(cfg.Interval)
	refresh := time.NewTicker(cfg.Refresh)
	defer tick.Stop()
	defer refresh.Stop()
	var lastStats runq.Stats
	var lastPreemptions map[runq.Pair]uint64
	for {
		select {
		case <-ctx.Done():
			log.Printf("runq-exporter: stopping, flushing")
			running.Store(false)
			if bpf != nil {
				bpf.Close()
			}
			flush(agg, m, ages, produce, ctEnc, time.Now())
			fctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			client.Flush(fctx)
			srv.Close()
			log.Printf("runq-exporter: stopped")
			return nil
		case <-refresh.C:
			resolver.Refresh()
		case now := <-tick.C:
			if cfg.Source == "procfs" {
				deltas, err := scanner.Scan()
				if err != nil {
					log.Printf("procfs: %v", err)
				}
				for _, d := range deltas {
					c, runtime := rules.Match(d.CgroupPath)
					if c == cgroups.System {
						continue // per-thread system samples are noise without a cause
					}
					observe(exporter.Sample{Container: c, Runtime: runtime, Latency: d.Mean, At: now, ID: fmt.Sprintf("p%d-%d", d.TID, now.UnixNano())})
				}
			}
			if bpf != nil {
				if totals, err := bpf.Preemptions(); err != nil {
					log.Printf("reading the preemption counts: %v", err)
				} else {
					for pair, n := range runq.Deltas(lastPreemptions, totals) {
						victim, _ := resolver.Resolve(pair.Prev)
						taker, _ := resolver.Resolve(pair.Next)
						agg.Preempted(victim, taker, int64(n))
					}
					lastPreemptions = totals
				}
			}
			flush(agg, m, ages, produce, ctEnc, now)
			budget.Forget(now)
			for _, c := range ages.Expired(now) {
				m.forget(c)
			}
			if bpf != nil {
				if st, err := bpf.Stats(); err == nil {
					m.drops.WithLabelValues("rate_limited").Add(float64(st.RateLimited - lastStats.RateLimited))
					m.drops.WithLabelValues("ringbuf_full").Add(float64(st.RingbufFull - lastStats.RingbufFull))
					lastStats = st
				}
			}
		}
	}
}

func flush(agg *exporter.Aggregator, m *metrics, ages *exporter.SeriesAges, produce func(string, string, *sink.Encoder, any), enc *sink.Encoder, now time.Time) {
	for _, c := range agg.Flush(now) {
		// counter = host/container/cause
		rest := strings.TrimPrefix(c.Counter, agg.Host+"/")
		i := strings.LastIndex(rest, "/")
		m.switchOut.WithLabelValues(rest[:i], rest[i+1:]).Add(float64(c.Delta))
		ages.Seen(rest[:i], now)
		produce(counterTopic, c.Namespace+"/"+c.Counter, enc, c)
	}
}

// bootOffset converts bpf_ktime_get_ns (CLOCK_MONOTONIC) to Unix time.
func bootOffset() int64 {
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	return time.Now().UnixNano() - ts.Nano()
}
