// Package procfs is the fallback source where BPF is not allowed: /proc/<pid>/task/<tid>/schedstat
// holds each thread's cumulative run-queue wait (run_delay, ns) and timeslice count
// (pcount); their deltas over an interval give the mean run-queue latency per timeslice.
// It cannot see who held the CPU, so its samples carry no preemption cause.
package procfs

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Stat of one thread.
type Stat struct {
	RunDelayNs uint64
	Slices     uint64
}

// ParseSchedstat reads "<cpu_time> <run_delay> <pcount>".
func ParseSchedstat(s string) (Stat, error) {
	f := strings.Fields(s)
	if len(f) < 3 {
		return Stat{}, fmt.Errorf("schedstat %q: want 3 fields", s)
	}
	delay, err1 := strconv.ParseUint(f[1], 10, 64)
	slices, err2 := strconv.ParseUint(f[2], 10, 64)
	if err1 != nil || err2 != nil {
		return Stat{}, fmt.Errorf("schedstat %q: not numbers", s)
	}
	return Stat{RunDelayNs: delay, Slices: slices}, nil
}

// CgroupV2Path reads the "0::<path>" line of /proc/<pid>/cgroup.
func CgroupV2Path(content string) string {
	for _, line := range strings.Split(content, "\n") {
		if strings.HasPrefix(line, "0::") {
			return strings.TrimSpace(line[3:])
		}
	}
	return ""
}

// Delta is one thread's mean run-queue latency over an interval.
type Delta struct {
	TID        int
	CgroupPath string
	Mean       time.Duration
	Slices     uint64
}

// Scanner remembers each thread's last stat and reports deltas.
type Scanner struct {
	Proc string // "/proc"
	last map[int]Stat
}

func NewScanner(proc string) *Scanner {
	return &Scanner{Proc: proc, last: map[int]Stat{}}
}

// Scan reads every thread and returns those that ran since the previous scan.
func (s *Scanner) Scan() ([]Delta, error) {
	tasks, err := filepath.Glob(filepath.Join(s.Proc, "[0-9]*", "task", "[0-9]*"))
	if err != nil {
		return nil, err
	}
	if len(tasks) == 0 {
		return nil, fmt.Errorf("no threads under %s", s.Proc)
	}
	seen := map[int]Stat{}
	var out []Delta
	for _, t := range tasks {
		tid, err := strconv.Atoi(filepath.Base(t))
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join(t, "schedstat"))
		if err != nil {
			continue // the thread exited
		}
		st, err := ParseSchedstat(string(b))
		if err != nil {
			continue
		}
		seen[tid] = st
		prev, ok := s.last[tid]
		if !ok || st.Slices <= prev.Slices {
			continue
		}
		cg, _ := os.ReadFile(filepath.Join(t, "cgroup"))
		n := st.Slices - prev.Slices
		out = append(out, Delta{TID: tid, CgroupPath: CgroupV2Path(string(cg)), Slices: n,
			Mean: time.Duration((st.RunDelayNs - prev.RunDelayNs) / n)})
	}
	s.last = seen
	return out, nil
}
