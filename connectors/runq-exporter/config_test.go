package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestDefaultsFileThenFlags(t *testing.T) {
	c, err := loadConfig(nil)
	if err != nil || c.Source != "bpf" || c.MetricsAddr != "127.0.0.1:9435" || c.RateLimit != 10*time.Millisecond || !c.TrackPreempted {
		t.Fatalf("defaults: %+v %v", c, err)
	}
	f := filepath.Join(t.TempDir(), "c.json")
	os.WriteFile(f, []byte(`{"source": "procfs", "rate_limit": "5ms", "container_root": "pods"}`), 0o644)
	c, err = loadConfig([]string{"-config", f, "-rate-limit", "1ms", "-no-track-preempted"})
	if err != nil || c.Source != "procfs" || c.RateLimit != time.Millisecond || c.ContainerRoot != "pods" || c.TrackPreempted {
		t.Fatalf("file then flags: %+v %v", c, err)
	}
	if c.ExportRate != 10 {
		t.Fatalf("export rate default: %v", c.ExportRate)
	}
	os.WriteFile(f, []byte(`{"export_rate": 2.5}`), 0o644)
	if c, err = loadConfig([]string{"-config", f}); err != nil || c.ExportRate != 2.5 {
		t.Fatalf("export rate from the file: %v %v", c.ExportRate, err)
	}
	if c, err = loadConfig([]string{"-config", f, "-export-rate", "0"}); err != nil || c.ExportRate != 0 {
		t.Fatalf("export rate 0 from a flag over the file: %v %v", c.ExportRate, err)
	}
}

func TestBadConfigIsNamed(t *testing.T) {
	f := filepath.Join(t.TempDir(), "c.json")
	os.WriteFile(f, []byte(`{"sauce": "bpf"}`), 0o644)
	if _, err := loadConfig([]string{"-config", f}); err == nil {
		t.Fatal("an unknown key was accepted")
	}
	if _, err := loadConfig([]string{"-source", "ebpf"}); err == nil {
		t.Fatal("an unknown source was accepted")
	}
	if _, err := loadConfig([]string{"-interval", "0s"}); err == nil {
		t.Fatal("a zero interval was accepted")
	}
	if _, err := loadConfig([]string{"-rate-limit", "-5ms"}); err == nil {
		t.Fatal("a negative rate limit was accepted")
	}
	if _, err := loadConfig([]string{"-export-rate", "-1"}); err == nil {
		t.Fatal("a negative export rate was accepted")
	}
	if _, err := loadConfig([]string{"-series-ttl", "0s"}); err == nil {
		t.Fatal("a zero series TTL was accepted")
	}
	if c, err := loadConfig(nil); err != nil || c.SeriesTTL != 10*time.Minute {
		t.Fatalf("series TTL default: %v %v", c.SeriesTTL, err)
	}
}
