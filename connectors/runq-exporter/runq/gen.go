// Package runq loads the run-queue latency BPF program (runq.bpf.c), attaches it to the
// scheduler's BTF tracepoints and reads its samples from the ring buffer.
package runq

// vmlinux.h is generated from this kernel's BTF by the build (see ../build.sh, the one recipe).
//go:generate go run github.com/cilium/ebpf/cmd/bpf2go -tags linux -type runq_event -type preempt_key runq runq.bpf.c -- -I../build -O2 -g -Wall
