package runq

import (
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"time"

	"github.com/cilium/ebpf/ringbuf"
	"golang.org/x/sys/unix"
)

// ringWait waits between looks at the ring buffer in Go's network poller, not in a blocking
// epoll_wait: a goroutine blocked in a system call keeps Go's sysmon thread waking every 20 µs
// to 10 ms to take its P back, and those wake-ups were a fifth of the exporter's CPU at rest.
// The ring's fd (a dup, non-blocking) is registered with the poller like a socket, so the
// program's forced wake-up at 64 KB still ends the wait early.
type ringWait struct {
	file *os.File
	conn interface {
		Read(func(uintptr) bool) error
	}
	reader *ringbuf.Reader
	closed atomic.Bool
}

func newRingWait(ringFD int, reader *ringbuf.Reader) (*ringWait, error) {
	fd, err := unix.Dup(ringFD)
	if err != nil {
		return nil, fmt.Errorf("duplicating the ring buffer's fd: %w", err)
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("making the ring buffer's fd non-blocking: %w", err)
	}
	f := os.NewFile(uintptr(fd), "runq-ringbuf")
	// a deadline is only accepted on a file the poller took
	if err := f.SetReadDeadline(time.Time{}); err != nil {
		f.Close()
		return nil, fmt.Errorf("the ring buffer's fd in Go's poller: %w", err)
	}
	conn, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil, err
	}
	return &ringWait{file: f, conn: conn, reader: reader}, nil
}

// Wait returns when samples wait in the ring and the program woke its readers, or after d.
func (w *ringWait) Wait(d time.Duration) error {
	if err := w.file.SetReadDeadline(time.Now().Add(d)); err != nil {
		return ringbuf.ErrClosed
	}
	err := w.conn.Read(func(uintptr) bool { return w.reader.AvailableBytes() > 0 })
	if err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		return nil
	}
	if w.closed.Load() { // the poller's "use of closed file" wraps no os.ErrClosed
		return ringbuf.ErrClosed
	}
	return err
}

func (w *ringWait) Close() error {
	w.closed.Store(true)
	return w.file.Close()
}
