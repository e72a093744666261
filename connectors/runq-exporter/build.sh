#!/usr/bin/env bash
# The one build recipe of the runq exporter; ./tally up, the Dockerfile and CI all run it.
#   build.sh OUTPUT        writes the binary to OUTPUT (atomically: a running binary is never truncated)
# Needs clang, libbpf-dev and bpftool (Debian packages) and Go (GO=/path/to/go to pick one).
# vmlinux.h comes from this kernel's BTF; bpf2go compiles runq/runq.bpf.c against it.
set -euo pipefail
cd "$(dirname "$0")"
out="${1:?usage: build.sh OUTPUT}"
go="${GO:-go}"
export GOFLAGS="${GOFLAGS:--mod=mod}"
mkdir -p build
bpftool btf dump file /sys/kernel/btf/vmlinux format c > build/vmlinux.h.tmp
mv build/vmlinux.h.tmp build/vmlinux.h
"$go" generate ./runq
CGO_ENABLED=0 "$go" build -o "$out.tmp" .
mv "$out.tmp" "$out"
