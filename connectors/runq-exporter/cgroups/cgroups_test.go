package cgroups

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

func TestContainerOfDefaultRule(t *testing.T) {
	rules, err := ParseRules("tally", "tally.containers", "")
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		"/tally.containers/web":          "web",
		"/tally.containers/web/worker/a": "web",
		"/tally.containers":              System,
		"/system.slice/cron.service":     System,
		"/":                              System,
		"/other/tally.containers/db":     System,
	} {
		if got, _ := rules.Match(path); got != want {
			t.Errorf("ContainerOf(%q) = %q, want %q", path, got, want)
		}
	}
}

func TestCause(t *testing.T) {
	cases := []struct{ victim, taker, want string }{
		{"web", "web", "same_container"},
		{"web", "db", "other_container"},
		{"web", System, "system"},
		{System, "web", "other_container"},
	}
	for _, c := range cases {
		if got := Cause(c.victim, c.taker); got != c.want {
			t.Errorf("Cause(%q, %q) = %q, want %q", c.victim, c.taker, got, c.want)
		}
	}
}

// The resolver maps a directory's inode number (a v2 cgroup id) to its path; a plain
// directory tree stands in for the cgroup mount.
func TestResolverMapsInodesToPathsAndRefreshes(t *testing.T) {
	mount := t.TempDir()
	web := filepath.Join(mount, "tally.containers", "web")
	if err := os.MkdirAll(web, 0o755); err != nil {
		t.Fatal(err)
	}
	rules, err := ParseRules("tally", "tally.containers", "")
	if err != nil {
		t.Fatal(err)
	}
	r := NewResolver(mount, rules)
	if err := r.Refresh(); err != nil {
		t.Fatal(err)
	}
	if got := r.Container(inode(t, web)); got != "web" {
		t.Fatalf("container = %q", got)
	}
	db := filepath.Join(mount, "tally.containers", "db")
	os.Mkdir(db, 0o755)
	if got := r.Container(inode(t, db)); got != System {
		t.Fatalf("unknown before refresh: %q", got)
	}
	r.Refresh()
	if got := r.Container(inode(t, db)); got != "db" {
		t.Fatalf("after refresh: %q", got)
	}
}

func inode(t *testing.T, p string) uint64 {
	var st syscall.Stat_t
	if err := syscall.Stat(p, &st); err != nil {
		t.Fatal(err)
	}
	return st.Ino
}

func TestANewCgroupIsResolvedFromItsFirstSampleWithoutWaitingForTheRefresh(t *testing.T) {
	mount := t.TempDir()
	os.MkdirAll(filepath.Join(mount, "tally.containers"), 0o755)
	rules, _ := ParseRules("tally", "tally.containers", "")
	r := NewResolver(mount, rules)
	if err := r.Refresh(); err != nil {
		t.Fatal(err)
	}
	kafka := filepath.Join(mount, "tally.containers", "kafka")
	os.Mkdir(kafka, 0o755)
	if c, rt := r.Resolve(inode(t, kafka)); c != "kafka" || rt != "tally" {
		t.Fatalf("a new cgroup's first sample: (%q, %q)", c, rt)
	}
	// an id no walk finds walks at most once per MissRefreshGap
	if c, _ := r.Resolve(1); c != System {
		t.Fatalf("unknown id: %q", c)
	}
	gateway := filepath.Join(mount, "tally.containers", "gateway")
	os.Mkdir(gateway, 0o755)
	if c, _ := r.Resolve(inode(t, gateway)); c != System {
		t.Fatalf("within the gap no second walk: %q", c)
	}
	time.Sleep(MissRefreshGap)
	if c, _ := r.Resolve(inode(t, gateway)); c != "gateway" {
		t.Fatalf("after the gap: %q", c)
	}
}
