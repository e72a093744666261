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
	"syscall"
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

// Resolver knows the cgroup tree as of its last Refresh.
type Resolver struct {
	mount string
	rule  *regexp.Regexp
	mu    sync.RWMutex
	paths map[uint64]string
}

func NewResolver(mount string, rule *regexp.Regexp) *Resolver {
	return &Resolver{mount: mount, rule: rule, paths: map[uint64]string{}}
}

// Refresh walks the hierarchy again: a cgroup's v2 id is its directory's inode number.
func (r *Resolver) Refresh() error {
	paths := map[uint64]string{}
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
		paths[st.Ino] = "/" + filepath.ToSlash(rel)
		if rel == "." {
			paths[st.Ino] = "/"
		}
		return nil
	})
	if err != nil {
		return err
	}
	r.mu.Lock()
	r.paths = paths
	r.mu.Unlock()
	return nil
}

// Path of a cgroup id, if known.
func (r *Resolver) Path(id uint64) (string, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	p, ok := r.paths[id]
	return p, ok
}

// Container of a cgroup id: the rule's first submatch on its path, or System.
func (r *Resolver) Container(id uint64) string {
	p, ok := r.Path(id)
	if !ok {
		return System
	}
	return ContainerOf(r.rule, p)
}

// ContainerOf applies a rule to a cgroup path.
func ContainerOf(rule *regexp.Regexp, path string) string {
	m := rule.FindStringSubmatch(path)
	if len(m) < 2 || m[1] == "" || m[1] == System {
		return System
	}
	return m[1]
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
