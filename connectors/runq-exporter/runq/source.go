//go:build linux

package runq

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/features"
	"github.com/cilium/ebpf/link"
	"github.com/cilium/ebpf/ringbuf"
	"github.com/cilium/ebpf/rlimit"
)

// ErrNotSupported is wrapped by every error that means "this machine cannot run it":
// callers (and tests) use errors.Is to fall back or skip.
var ErrNotSupported = errors.New("not supported")

// NotSupportedError names the missing capability.
type NotSupportedError struct {
	Capability string
	Err        error
}

func (e *NotSupportedError) Error() string {
	return fmt.Sprintf("run-queue tracing not supported here: %s: %v", e.Capability, e.Err)
}

func (e *NotSupportedError) Unwrap() []error { return []error{ErrNotSupported, e.Err} }

// Sample is one run-queue latency: how long the task of CgroupID waited before it got the
// CPU from a task of PrevCgroupID (0: from an idle CPU).
type Sample struct {
	PrevCgroupID uint64
	CgroupID     uint64
	Latency      time.Duration
	BootTimeNs   uint64
}

// Pair is a (prev cgroup, next cgroup) of a preemption: a task of Prev switched out while still
// runnable, for a task of Next.
type Pair struct{ Prev, Next uint64 }

// Stats are the program's own counters, summed over CPUs.
type Stats struct {
	Emitted, RateLimited, RingbufFull uint64
}

// Options of the BPF program, fixed at load time.
type Options struct {
	// RateLimit: at most one sample per cgroup per CPU per RateLimit (0: every switch).
	RateLimit time.Duration
	// TrackPreempted also enqueues a still-runnable prev at sched_switch.
	TrackPreempted bool
	// ReadInterval: the reader looks at the ring buffer this often, and the program wakes it
	// earlier only when 64 KB of samples wait (0: the program wakes it at every sample). The
	// wait is in Go's poller (ringWait), so no thread sits in a system call between looks.
	ReadInterval time.Duration
}

// wakeupBytes: a quarter of the ring buffer (256 KB), about 1,600 samples.
const wakeupBytes = 64 * 1024

// Source is the loaded, attached program and its ring buffer reader.
type Source struct {
	objs     runqObjects
	links    []link.Link
	reader   *ringbuf.Reader
	interval time.Duration
	wait     *ringWait
	rec      ringbuf.Record
}

// Open checks the kernel, loads and attaches the program.
func Open(opts Options) (*Source, error) {
	if _, err := os.Stat("/sys/kernel/btf/vmlinux"); err != nil {
		return nil, &NotSupportedError{"kernel BTF (/sys/kernel/btf/vmlinux)", err}
	}
	if err := features.HaveMapType(ebpf.RingBuf); err != nil {
		return nil, &NotSupportedError{"BPF ring buffer maps (Linux 5.8+)", err}
	}
	if err := rlimit.RemoveMemlock(); err != nil {
		return nil, &NotSupportedError{"raising RLIMIT_MEMLOCK (run as root)", err}
	}
	spec, err := loadRunq()
	if err != nil {
		return nil, fmt.Errorf("reading the BPF object: %w", err)
	}
	preempted := uint64(0)
	if opts.TrackPreempted {
		preempted = 1
	}
	wakeup := uint64(0)
	if opts.ReadInterval > 0 {
		wakeup = wakeupBytes
	}
	for name, v := range map[string]uint64{"rate_limit_ns": uint64(opts.RateLimit.Nanoseconds()), "track_preempted": preempted,
		"wakeup_bytes": wakeup} {
		vs, ok := spec.Variables[name]
		if !ok {
			return nil, fmt.Errorf("the BPF object has no variable %s", name)
		}
		if err := vs.Set(v); err != nil {
			return nil, fmt.Errorf("setting %s: %w", name, err)
		}
	}
	s := &Source{interval: opts.ReadInterval}
	if err := spec.LoadAndAssign(&s.objs, nil); err != nil {
		if errors.Is(err, os.ErrPermission) {
			return nil, &NotSupportedError{"loading BPF programs (needs root, or CAP_BPF and CAP_PERFMON)", err}
		}
		return nil, &NotSupportedError{"loading the tp_btf programs, task storage and kfuncs (bpf_rcu_read_lock)", err}
	}
	for _, p := range []*ebpf.Program{s.objs.TpSchedWakeup, s.objs.TpSchedWakeupNew, s.objs.TpSchedSwitch} {
		l, err := link.AttachTracing(link.TracingOptions{Program: p})
		if err != nil {
			s.Close()
			return nil, &NotSupportedError{"attaching BTF tracepoints (tp_btf/sched_*)", err}
		}
		s.links = append(s.links, l)
	}
	r, err := ringbuf.NewReader(s.objs.Events)
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("opening the ring buffer: %w", err)
	}
	s.reader = r
	if s.interval > 0 {
		// the reader only drains (a deadline in the past: epoll_wait returns at once); the
		// waiting between looks is Go's, in ringWait
		r.SetDeadline(time.Unix(1, 0))
		if s.wait, err = newRingWait(s.objs.Events.FD(), r); err != nil {
			s.Close()
			return nil, err
		}
	}
	return s, nil
}

// Read blocks for the next sample; it returns ringbuf.ErrClosed after Close. Samples come in
// bursts, every read interval (or once 64 KB wait): one wake-up for all of them.
func (s *Source) Read() (Sample, error) {
	for {
		err := s.reader.ReadInto(&s.rec)
		if errors.Is(err, os.ErrDeadlineExceeded) {
			if err := s.wait.Wait(s.interval); err != nil {
				return Sample{}, err
			}
			continue
		}
		if err != nil {
			return Sample{}, err
		}
		return Decode(s.rec.RawSample)
	}
}

// Decode parses one struct runq_event (four little-endian u64).
func Decode(b []byte) (Sample, error) {
	if len(b) < 32 {
		return Sample{}, fmt.Errorf("runq_event of %d bytes, want 32", len(b))
	}
	le := binary.LittleEndian
	return Sample{PrevCgroupID: le.Uint64(b[0:]), CgroupID: le.Uint64(b[8:]),
		Latency: time.Duration(le.Uint64(b[16:])), BootTimeNs: le.Uint64(b[24:])}, nil
}

// Stats sums the per-CPU stats map.
func (s *Source) Stats() (Stats, error) {
	var out Stats
	for i, dst := range []*uint64{&out.Emitted, &out.RateLimited, &out.RingbufFull} {
		var perCPU []uint64
		if err := s.objs.Stats.Lookup(uint32(i), &perCPU); err != nil {
			return out, err
		}
		for _, v := range perCPU {
			*dst += v
		}
	}
	return out, nil
}

// Preemptions returns the running totals per pair, summed over CPUs (a pair the LRU map
// evicted starts again from zero; see Deltas).
func (s *Source) Preemptions() (map[Pair]uint64, error) {
	out := map[Pair]uint64{}
	var key runqPreemptKey
	var perCPU []uint64
	it := s.objs.Preemptions.Iterate()
	for it.Next(&key, &perCPU) {
		var n uint64
		for _, v := range perCPU {
			n += v
		}
		out[Pair{key.PrevCgroupId, key.CgroupId}] = n
	}
	return out, it.Err()
}

// Deltas turns running totals into the counts since the previous totals: a total below the
// previous one was evicted and counted again from zero, so all of it is new.
func Deltas(prev, now map[Pair]uint64) map[Pair]uint64 {
	out := map[Pair]uint64{}
	for k, n := range now {
		if p := prev[k]; n > p {
			out[k] = n - p
		} else if n < p {
			out[k] = n
		}
	}
	return out
}

// Close detaches and unloads everything; a blocked Read returns.
func (s *Source) Close() error {
	if s.wait != nil {
		s.wait.Close()
	}
	if s.reader != nil {
		s.reader.Close()
	}
	for _, l := range s.links {
		l.Close()
	}
	return s.objs.Close()
}
