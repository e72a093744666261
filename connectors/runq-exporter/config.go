package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"time"
)

// Config: defaults here, then the JSON file (-config), then flags.
type Config struct {
	Source         string        `json:"source"`          // bpf | procfs
	Kafka          string        `json:"kafka"`           // bootstrap servers
	Registry       string        `json:"registry"`        // schema registry URL
	Host           string        `json:"host"`            // host part of time series ids and counters
	CgroupMount    string        `json:"cgroup_mount"`    // "" = detect
	ContainerRoot  string        `json:"container_root"`  // child cgroups of it are containers
	ContainerRegex string        `json:"container_regex"` // a custom rule, tried before the named ones
	Containers     string        `json:"containers"`      // named rules, in order (default cgroups.DefaultRules)
	MetricsAddr    string        `json:"metrics_addr"`    // Prometheus /metrics
	RateLimit      time.Duration `json:"-"`
	RateLimitText  string        `json:"rate_limit"`      // per cgroup per CPU
	TrackPreempted bool          `json:"track_preempted"` // enqueue a still-runnable prev
	ReadInterval   time.Duration `json:"-"`
	ReadText       string        `json:"read_interval"` // ring buffer reads (0: woken at every sample)
	Interval       time.Duration `json:"-"`
	IntervalText   string        `json:"interval"`       // switch-out flush / procfs scan
	RefreshText    string        `json:"cgroup_refresh"` // cgroup tree re-scan
	Refresh        time.Duration `json:"-"`
	NoKafka        bool          `json:"no_kafka"`      // measure only: encode and count, produce nothing
	ExportSystem   bool          `json:"export_system"` // also produce samples of non-container tasks
	ExportRate     float64       `json:"export_rate"`   // sched.runq events per container per second (0: every sample)
	SeriesTTLText  string        `json:"series_ttl"`    // a container's metrics are deleted after this long without samples
	SeriesTTL      time.Duration `json:"-"`
}

func defaults() Config {
	host, _ := os.Hostname()
	return Config{Source: "bpf", Kafka: "127.0.0.1:9092", Registry: "http://127.0.0.1:8085", Host: host,
		ContainerRoot: "tally.containers", MetricsAddr: "127.0.0.1:9435", RateLimitText: "10ms",
		TrackPreempted: true, IntervalText: "1s", RefreshText: "2s", ExportRate: 10, ReadText: "100ms", SeriesTTLText: "10m"}
}

func loadConfig(args []string) (Config, error) {
	c := defaults()
	fs := flag.NewFlagSet("runq-exporter", flag.ContinueOnError)
	file := fs.String("config", "", "JSON config file (keys as the flags, with _)")
	src := fs.String("source", "", "bpf (default) or procfs")
	kafka := fs.String("kafka", "", "Kafka bootstrap servers (default 127.0.0.1:9092)")
	registry := fs.String("registry", "", "schema registry URL (default http://127.0.0.1:8085)")
	host := fs.String("host", "", "host name in ids (default: hostname)")
	mount := fs.String("cgroup-mount", "", "cgroup v2 mount (default: detected)")
	root := fs.String("container-root", "", "cgroup (relative to the mount) whose children are containers (default tally.containers)")
	regex := fs.String("container-regex", "", "a custom rule over the v2 path, tried first; its first group is the container")
	containers := fs.String("containers", "", "container rules in order, of tally, kubernetes, docker, containerd, podman, systemd (default tally,kubernetes,docker,containerd,podman)")
	metrics := fs.String("metrics-addr", "", "Prometheus listen address (default 127.0.0.1:9435)")
	rate := fs.String("rate-limit", "", "BPF samples per cgroup per CPU at most once per this (default 10ms)")
	read := fs.String("read-interval", "", "read the ring buffer this often, or when 64 KB of samples wait (default 100ms; 0: the BPF program wakes the reader at every sample)")
	interval := fs.String("interval", "", "switch-out flush and procfs scan interval (default 1s)")
	noPreempt := fs.Bool("no-track-preempted", false, "do not enqueue preempted, still-runnable tasks")
	noKafka := fs.Bool("no-kafka", false, "encode and count events but produce nothing (benchmarks)")
	exportRate := fs.Float64("export-rate", 10, "sched.runq events per container per second at most; the metrics and switch-out counts see every sample (default 10; 0: export every sample)")
	seriesTTL := fs.String("series-ttl", "", "delete a container's metric series after this long without a sample or a switch-out: it is gone (default 10m)")
	exportSystem := fs.Bool("export-system", false, "also produce run-queue samples of system (non-container) tasks; they always reach the metrics")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if *file != "" {
		b, err := os.ReadFile(*file)
		if err != nil {
			return c, err
		}
		dec := json.NewDecoder(bytesReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&c); err != nil {
			return c, fmt.Errorf("%s: %w", *file, err)
		}
	}
	for dst, v := range map[*string]string{&c.Source: *src, &c.Kafka: *kafka, &c.Registry: *registry, &c.Host: *host,
		&c.CgroupMount: *mount, &c.ContainerRoot: *root, &c.ContainerRegex: *regex, &c.Containers: *containers, &c.MetricsAddr: *metrics,
		&c.RateLimitText: *rate, &c.IntervalText: *interval, &c.ReadText: *read, &c.SeriesTTLText: *seriesTTL} {
		if v != "" {
			*dst = v
		}
	}
	if *noPreempt {
		c.TrackPreempted = false
	}
	if *noKafka {
		c.NoKafka = true
	}
	if *exportSystem {
		c.ExportSystem = true
	}
	fs.Visit(func(f *flag.Flag) { // a flag given overrides the file, even when it is 0
		if f.Name == "export-rate" {
			c.ExportRate = *exportRate
		}
	})
	if c.ExportRate < 0 {
		return c, fmt.Errorf("export_rate: %v is negative (0 exports every sample)", c.ExportRate)
	}
	var err error
	if c.RateLimit, err = time.ParseDuration(c.RateLimitText); err != nil {
		return c, fmt.Errorf("rate_limit: %w", err)
	}
	if c.RateLimit < 0 {
		return c, fmt.Errorf("rate_limit: %s is negative (0 exports every switch)", c.RateLimitText)
	}
	if c.ReadInterval, err = time.ParseDuration(c.ReadText); err != nil || c.ReadInterval < 0 {
		return c, fmt.Errorf("read_interval: must be a duration >= 0")
	}
	if c.Interval, err = time.ParseDuration(c.IntervalText); err != nil || c.Interval <= 0 {
		return c, fmt.Errorf("interval: must be a positive duration")
	}
	if c.Refresh, err = time.ParseDuration(c.RefreshText); err != nil || c.Refresh <= 0 {
		return c, fmt.Errorf("cgroup_refresh: must be a positive duration")
	}
	if c.SeriesTTL, err = time.ParseDuration(c.SeriesTTLText); err != nil || c.SeriesTTL <= 0 {
		return c, fmt.Errorf("series_ttl: must be a positive duration")
	}
	if c.Source != "bpf" && c.Source != "procfs" {
		return c, fmt.Errorf("source: %q is neither bpf nor procfs", c.Source)
	}
	return c, nil
}
