//go:build ignore

// Run-queue latency per task, tagged with the cgroup ids of the task that gets the CPU and of
// the one it displaces (after "Noisy Neighbor Detection with eBPF", shared/reference).
// sched_wakeup/sched_wakeup_new stamp a task when it becomes runnable; sched_switch computes
// how long `next` waited and, when enabled, stamps a still-runnable `prev` (a CPU-bound task
// that was preempted is never woken, so without this it would be invisible).
// Latency samples are rate-limited per cgroup per CPU; preemptions (a still-runnable prev
// switched out for next) are all counted, per (prev cgroup, next cgroup) in a per-CPU map the
// exporter reads each interval: how often a container loses the CPU, and to whom, is exact.
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

#define TASK_RUNNING 0

struct runq_event {
	__u64 prev_cgroup_id;
	__u64 cgroup_id;
	__u64 runq_lat; // ns
	__u64 ts;       // ns since boot (bpf_ktime_get_ns)
};
const struct runq_event *unused __attribute__((unused));

struct preempt_key {
	__u64 prev_cgroup_id; // the task switched out while still runnable
	__u64 cgroup_id;      // the task that got the CPU
};
const struct preempt_key *unused_key __attribute__((unused));

enum runq_stat { STAT_EMITTED, STAT_RATE_LIMITED, STAT_RINGBUF_FULL, STAT_MAX };

// Set by the loader before the program is loaded.
volatile const __u64 rate_limit_ns = 10000000; // at most one event per cgroup per CPU per interval
volatile const __u64 track_preempted = 1;
// Wake the reader only when this much waits in the ring buffer (0: at every sample); the
// reader also looks on its own every read interval. A wake-up per sample cost the exporter
// more CPU than the samples themselves (a context switch each, ~1,000 a second on the stack).
volatile const __u64 wakeup_bytes = 65536;

// When each task became runnable (0: it is not waiting), in the task's own local storage: a
// pointer from the task instead of a hash lookup and a bucket lock at every wakeup and switch,
// and no table to fill (the hash of 16,384 pids it replaces cost as much a call as runqlat's).
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, __u64);
} runq_enqueued SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);
	__type(value, __u64);
} cgroup_id_to_last_event_ts SEC(".maps");

// LRU: pairs of cgroups that are gone age out instead of filling the map
struct {
	__uint(type, BPF_MAP_TYPE_LRU_PERCPU_HASH);
	__uint(max_entries, 16384);
	__type(key, struct preempt_key);
	__type(value, __u64);
} preemptions SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, STAT_MAX);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

void bpf_rcu_read_lock(void) __ksym;
void bpf_rcu_read_unlock(void) __ksym;

static __always_inline void count(__u32 which)
{
	__u64 *n = bpf_map_lookup_elem(&stats, &which);
	if (n)
		*n += 1;
}

static __always_inline __u64 task_cgroup_id(struct task_struct *task)
{
	__u64 id;
	bpf_rcu_read_lock();
	id = task->cgroups->dfl_cgrp->kn->id;
	bpf_rcu_read_unlock();
	return id;
}

// The first time a task becomes runnable is when its wait starts (a second wakeup, or a
// preemption of a task already stamped, leaves the stamp). now: 0 to read the clock here.
static __always_inline void enqueue(struct task_struct *task, __u64 now)
{
	if (task->pid == 0) // kernel idle tasks: not worth a storage
		return;
	__u64 *enq = bpf_task_storage_get(&runq_enqueued, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (enq && !*enq)
		*enq = now ? now : bpf_ktime_get_ns();
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(tp_sched_wakeup, struct task_struct *p)
{
	enqueue(p, 0);
	return 0;
}

SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(tp_sched_wakeup_new, struct task_struct *p)
{
	enqueue(p, 0);
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(tp_sched_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	__u32 next_pid = next->pid;
	__u64 prev_cgroup_id = 0, cgroup_id = 0, now = 0;
	int preempted = prev->pid != 0 && prev->__state == TASK_RUNNING;

	if (preempted) {
		if (track_preempted) {
			// one clock read for prev's enqueue and next's wait: the same instant
			now = bpf_ktime_get_ns();
			enqueue(prev, now);
		}
		if (next_pid != 0) {
			prev_cgroup_id = task_cgroup_id(prev);
			cgroup_id = task_cgroup_id(next);
			struct preempt_key key = {.prev_cgroup_id = prev_cgroup_id, .cgroup_id = cgroup_id};
			__u64 *n = bpf_map_lookup_elem(&preemptions, &key);
			if (n) {
				*n += 1; // per-CPU value: no other CPU writes it
			} else {
				__u64 one = 1;
				bpf_map_update_elem(&preemptions, &key, &one, BPF_NOEXIST);
			}
		}
	}

	if (next_pid == 0)
		return 0;
	__u64 *tsp = bpf_task_storage_get(&runq_enqueued, next, 0, 0);
	if (!tsp || !*tsp)
		return 0;
	if (!now)
		now = bpf_ktime_get_ns();
	__u64 runq_lat = now - *tsp;
	*tsp = 0; // it runs: its wait is over

	if (!preempted) {
		// a wait that ends on an idle CPU displaced no one: no cause (0), and no lookup
		prev_cgroup_id = prev->pid != 0 ? task_cgroup_id(prev) : 0;
		cgroup_id = task_cgroup_id(next);
	}

	__u64 *last = bpf_map_lookup_elem(&cgroup_id_to_last_event_ts, &cgroup_id);
	if (last && now - *last < rate_limit_ns) {
		count(STAT_RATE_LIMITED);
		return 0;
	}
	struct runq_event *event = bpf_ringbuf_reserve(&events, sizeof(*event), 0);
	if (!event) {
		count(STAT_RINGBUF_FULL);
		return 0;
	}
	event->prev_cgroup_id = prev_cgroup_id;
	event->cgroup_id = cgroup_id;
	event->runq_lat = runq_lat;
	event->ts = now;
	__u64 flags = 0;
	if (wakeup_bytes)
		flags = bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >= wakeup_bytes ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP;
	bpf_ringbuf_submit(event, flags);
	bpf_map_update_elem(&cgroup_id_to_last_event_ts, &cgroup_id, &now, BPF_ANY);
	count(STAT_EMITTED);
	return 0;
}
