// Package cgroups maps cgroup v2 ids (what the BPF program reports) to cgroup paths and
// those to containers, by a configurable rule; everything else is a system service.
package cgroups

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// System is the container name of everything the rule does not match.
const System = "system"

// DetectMount returns where cgroup v2 is mounted: /sys/fs/cgroup/unified on hybrid hosts,
// /sys/fs/cgroup on pure v2 ones.
func DetectMount() (string, error) {
	for _, p := range []string{"/sys/fs/cgroup/unified", "/sys/fs/cgroup"} {
		if _, err := os.Stat(filepath.Join(p, "cgroup.procs")); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("no cgroup v2 hierarchy at /sys/fs/cgroup/unified or /sys/fs/cgroup")
}

// DefaultRule: one container per child cgroup of root (a path relative to the mount, e.g.
// "tally.containers"); the first submatch is the container's name.
func DefaultRule(root string) *regexp.Regexp {
	return regexp.MustCompile("^/" + regexp.QuoteMeta(root) + "/([^/]+)")
}

// Resolver knows the cgroup tree as of its last Refresh, each cgroup with its container and
// runtime already decided (the rules run once a cgroup, not once a sample).
type Resolver struct {
	mount string
	rules Rules
	mu    sync.RWMutex
	ids   map[uint64]entry
	// the last walk a lookup miss asked for (unix ns), so an id that never resolves (a cgroup
	// already gone) costs at most one walk per MissRefreshGap
	lastMissWalk atomic.Int64
}

// MissRefreshGap: at most one walk per this for ids the last walk did not see.
const MissRefreshGap = 250 * time.Millisecond

type entry struct{ path, container, runtime string }

func NewResolver(mount string, rules Rules) *Resolver {
	return &Resolver{mount: mount, rules: rules, ids: map[uint64]entry{}}
}

// Refresh walks the hierarchy again: a cgroup's v2 id is its directory's inode number.
func (r *Resolver) Refresh() error {
	ids := map[uint64]entry{}
	err := filepath.WalkDir(r.mount, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == r.mount {
				return err
			}
			return nil // a cgroup removed while walking
		}
		if !d.IsDir() {
			return nil
		}
		var st syscall.Stat_t
		if syscall.Stat(p, &st) != nil {
			return nil
		}
		rel, _ := filepath.Rel(r.mount, p)
		path := "/" + filepath.ToSlash(rel)
		if rel == "." {
			path = "/"
		}
		c, rt := r.rules.Match(path)
		ids[st.Ino] = entry{path, c, rt}
		return nil
	})
	if err != nil {
		return err
	}
	r.mu.Lock()
	r.ids = ids
	r.mu.Unlock()
	return nil
}

// Path of a cgroup id, if known.
func (r *Resolver) Path(id uint64) (string, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	e, ok := r.ids[id]
	return e.path, ok
}

// Container of a cgroup id: what the first matching rule names it, or System.
func (r *Resolver) Container(id uint64) string {
	c, _ := r.Lookup(id)
	return c
}

// Resolve is Lookup for the samples' path: an id the last walk did not see (a cgroup made
// since, a new container) walks the tree again first, so a container is attributed from its
// first samples instead of as System until the periodic refresh. Event-driven without a
// watch per cgroup: inotify is not recursive and a host has thousands of cgroups.
func (r *Resolver) Resolve(id uint64) (container, runtime string) {
	r.mu.RLock()
	e, ok := r.ids[id]
	r.mu.RUnlock()
	if ok {
		return e.container, e.runtime
	}
	if id == 0 { // the source could not tell the cgroup
		return System, ""
	}
	now := time.Now().UnixNano()
	last := r.lastMissWalk.Load()
	if now-last < int64(MissRefreshGap) || !r.lastMissWalk.CompareAndSwap(last, now) {
		return System, ""
	}
	if r.Refresh() != nil {
		return System, ""
	}
	return r.Lookup(id)
}

// Lookup: the container of a cgroup id and the runtime that made it ("" for System).
func (r *Resolver) Lookup(id uint64) (container, runtime string) {
	r.mu.RLock()
	e, ok := r.ids[id]
	r.mu.RUnlock()
	if !ok {
		return System, ""
	}
	return e.container, e.runtime
}

// Cause classifies a preemption: the victim (switched out) and the task that took the CPU.
func Cause(victim, taker string) string {
	switch {
	case taker == System:
		return "system"
	case taker == victim:
		return "same_container"
	default:
		return "other_container"
	}
}
