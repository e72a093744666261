package procfs

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	st, err := ParseSchedstat("1000 2500 7\n")
	if err != nil || st.RunDelayNs != 2500 || st.Slices != 7 {
		t.Fatalf("%+v %v", st, err)
	}
	if _, err := ParseSchedstat("1 2"); err == nil {
		t.Fatal("short line accepted")
	}
	if CgroupV2Path("12:cpu:/x\n0::/tally.containers/web\n") != "/tally.containers/web" {
		t.Fatal("v2 line not found")
	}
}

// A fake /proc: deltas of run_delay over pcount give the mean latency per timeslice.
func TestScanReportsDeltas(t *testing.T) {
	proc := t.TempDir()
	task := filepath.Join(proc, "42", "task", "43")
	os.MkdirAll(task, 0o755)
	os.WriteFile(filepath.Join(task, "cgroup"), []byte("0::/tally.containers/web\n"), 0o644)
	os.WriteFile(filepath.Join(task, "schedstat"), []byte("0 1000 10\n"), 0o644)
	s := NewScanner(proc)
	if d, _ := s.Scan(); len(d) != 0 {
		t.Fatalf("first scan has no baseline: %v", d)
	}
	os.WriteFile(filepath.Join(task, "schedstat"), []byte("0 41000 14\n"), 0o644)
	d, err := s.Scan()
	if err != nil || len(d) != 1 {
		t.Fatalf("%v %v", d, err)
	}
	if d[0].TID != 43 || d[0].Mean != 10*time.Microsecond || d[0].Slices != 4 || d[0].CgroupPath != "/tally.containers/web" {
		t.Fatalf("%+v", d[0])
	}
}

// On this machine: the real /proc works (the fallback needs no privilege).
func TestScanRealProc(t *testing.T) {
	s := NewScanner("/proc")
	if _, err := s.Scan(); err != nil {
		t.Skipf("no readable /proc: %v", err)
	}
	time.Sleep(50 * time.Millisecond)
	if _, err := s.Scan(); err != nil {
		t.Fatal(err)
	}
}
