//go:build linux

package runq

import (
	"encoding/binary"
	"errors"
	"os"
	"os/exec"
	"testing"
	"time"
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
	src, err := Open(Options{RateLimit: time.Millisecond, TrackPreempted: true})
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
}
