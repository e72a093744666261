//go:build linux

package runq

import (
	"encoding/binary"
	"errors"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/cilium/ebpf/ringbuf"
)

func TestDecode(t *testing.T) {
	b := make([]byte, 32)
	for i, v := range []uint64{11, 22, 3000, 44} {
		binary.LittleEndian.PutUint64(b[i*8:], v)
	}
	s, err := Decode(b)
	if err != nil || s.PrevCgroupID != 11 || s.CgroupID != 22 || s.Latency != 3*time.Microsecond || s.BootTimeNs != 44 {
		t.Fatalf("%+v %v", s, err)
	}
	if _, err := Decode(b[:31]); err == nil {
		t.Fatal("short record accepted")
	}
}

func TestNotSupportedIsRecognisable(t *testing.T) {
	err := error(&NotSupportedError{"kernel BTF", os.ErrNotExist})
	if !errors.Is(err, ErrNotSupported) || !errors.Is(err, os.ErrNotExist) {
		t.Fatal("errors.Is must see both the category and the cause")
	}
}

// The real program on this kernel: load, attach, and see a sample while two busy loops
// compete for the CPUs. Skipped, with the capability named, where BPF is not allowed.
func TestLoadsAttachesAndSamples(t *testing.T) {
	src, err := Open(Options{RateLimit: time.Millisecond, TrackPreempted: true, ReadInterval: 50 * time.Millisecond})
	if errors.Is(err, ErrNotSupported) {
		t.Skipf("the BPF program cannot run here (the error names the missing capability): %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	var hogs []*exec.Cmd
	for i := 0; i < 3; i++ {
		c := exec.Command("sh", "-c", "while :; do :; done")
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		hogs = append(hogs, c)
	}
	defer func() {
		for _, c := range hogs {
			c.Process.Kill()
			c.Wait()
		}
	}()
	got := make(chan Sample, 1)
	go func() {
		if s, err := src.Read(); err == nil {
			got <- s
		}
	}()
	select {
	case s := <-got:
		if s.CgroupID == 0 || s.BootTimeNs == 0 {
			t.Fatalf("implausible sample %+v", s)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no sample in 10 s")
	}
	st, err := src.Stats()
	if err != nil || st.Emitted == 0 {
		t.Fatalf("stats %+v %v", st, err)
	}
	// three loops on two CPUs preempt each other: every preemption is counted, by pair
	var total uint64
	for deadline := time.Now().Add(10 * time.Second); total == 0 && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		p, err := src.Preemptions()
		if err != nil {
			t.Fatal(err)
		}
		for pair, n := range p {
			if pair.Prev == 0 || pair.Next == 0 {
				t.Fatalf("a pair without a cgroup: %+v", pair)
			}
			total += n
		}
	}
	if total == 0 {
		t.Fatal("no preemption counted in 10 s of three busy loops on two CPUs")
	}
}

func TestDeltasOfRunningTotals(t *testing.T) {
	a, b, c := Pair{1, 2}, Pair{2, 1}, Pair{3, 1}
	got := Deltas(map[Pair]uint64{a: 10, b: 5, c: 7}, map[Pair]uint64{a: 15, b: 5, c: 2, {4, 4}: 1})
	want := map[Pair]uint64{a: 5, c: 2, {4, 4}: 1} // c was evicted and counted again: 2 new
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for k, n := range want {
		if got[k] != n {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
}

// Between looks the reader waits in Go's poller; the program's forced wake-up at 64 KB must
// still end that wait long before the read interval, and Close must end it too.
func TestWakesEarlyAt64KBAndCloseEndsTheWait(t *testing.T) {
	src, err := Open(Options{RateLimit: 0, ReadInterval: time.Hour})
	if errors.Is(err, ErrNotSupported) {
		t.Skipf("the BPF program cannot run here (the error names the missing capability): %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	defer close(stop)
	go func() { // context switches, each a sample with no rate limit
		for {
			select {
			case <-stop:
				return
			default:
				time.Sleep(50 * time.Microsecond)
			}
		}
	}()
	samples := make(chan error, 1)
	go func() {
		var err error
		for n := 0; err == nil; n++ {
			if _, err = src.Read(); n == 0 {
				samples <- err
			}
		}
		samples <- err
	}()
	select {
	case err := <-samples:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no sample in 30 s with a read interval of an hour: the 64 KB wake-up did not end the wait")
	}
	src.Close()
	select {
	case err := <-samples:
		if !errors.Is(err, ringbuf.ErrClosed) {
			t.Fatalf("Read after Close: %v, want ringbuf.ErrClosed", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Read still waiting 10 s after Close")
	}
}
