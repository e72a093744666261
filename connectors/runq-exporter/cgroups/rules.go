package cgroups

import (
	"fmt"
	"regexp"
	"strings"
)

// Rule reads a container out of a cgroup v2 path (relative to the mount) for one runtime's
// layout: Docker, containerd, CRI-O under Kubernetes, Podman, systemd services, or Tally's own.
type Rule struct {
	Name    string // how the config names it (--containers=docker,podman)
	Runtime string // the runtime label of what it matches
	re      *regexp.Regexp
	name    func(m []string) (name, runtime string)
}

// Match returns the container and its runtime when the path is one of the rule's.
func (r Rule) Match(path string) (container, runtime string, ok bool) {
	m := r.re.FindStringSubmatch(path)
	if m == nil {
		return "", "", false
	}
	name, rt := r.name(m)
	if name == "" || name == System {
		return "", "", false
	}
	if rt == "" {
		rt = r.Runtime
	}
	return name, rt, true
}

func (r Rule) String() string { return r.Name }

// Rules are tried in order; the first that matches names the container.
type Rules []Rule

// Match: the container and runtime of a path, or System and "" when no rule matches.
func (rs Rules) Match(path string) (container, runtime string) {
	for _, r := range rs {
		if c, rt, ok := r.Match(path); ok {
			return c, rt
		}
	}
	return System, ""
}

func (rs Rules) String() string {
	names := make([]string, len(rs))
	for i, r := range rs {
		names[i] = r.Name
	}
	return strings.Join(names, ",")
}

// DefaultRules: Tally's own components and every container runtime; systemd services are
// opt-in (on a host they are many, and most are not what a noisy-neighbor question is about).
const DefaultRules = "tally,kubernetes,docker,containerd,podman"

// ShortID is how the runtimes' own tools print a container id (docker ps, crictl ps, podman ps).
func ShortID(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

const hex64 = `([0-9a-f]{64})`

// The runtime a Kubernetes container's scope names (kubelet's systemd cgroup driver).
var criRuntimes = map[string]string{"cri-containerd": "containerd", "crio": "cri-o", "docker": "docker"}

func builtin(name, tallyRoot string) (Rule, error) {
	switch name {
	case "tally":
		// each of Tally's components in its own child of tally.containers (./tally up)
		return Rule{Name: name, Runtime: "tally", re: DefaultRule(tallyRoot),
			name: func(m []string) (string, string) { return m[1], "" }}, nil
	case "kubernetes":
		// systemd driver: .../kubepods-burstable-pod<uid with _>.slice/cri-containerd-<id>.scope
		// (also under kind's kubelet.slice); cgroupfs driver: /kubepods/burstable/pod<uid>/<id>
		re := regexp.MustCompile(`kubepods(?:-[a-z]+)?-pod([0-9a-f_]{36})\.slice/(cri-containerd|crio|docker)-` + hex64 + `\.scope(?:/|$)` +
			`|/kubepods(?:/[a-z]+)?/pod([0-9a-f-]{36})/` + hex64 + `(?:/|$)`)
		return Rule{Name: name, Runtime: "kubernetes", re: re, name: func(m []string) (string, string) {
			if m[1] != "" {
				return "pod/" + strings.ReplaceAll(m[1], "_", "-") + "/" + ShortID(m[3]), criRuntimes[m[2]]
			}
			return "pod/" + m[4] + "/" + ShortID(m[5]), ""
		}}, nil
	case "docker":
		// systemd driver: /system.slice/docker-<id>.scope; cgroupfs driver: /docker/<id>
		re := regexp.MustCompile(`(?:^|/)docker-` + hex64 + `\.scope(?:/|$)|^/docker/` + hex64 + `(?:/|$)`)
		return Rule{Name: name, Runtime: "docker", re: re, name: func(m []string) (string, string) {
			return ShortID(m[1] + m[2]), ""
		}}, nil
	case "containerd":
		// outside Kubernetes: nerdctl's /system.slice/nerdctl-<id>.scope, a CRI scope elsewhere
		re := regexp.MustCompile(`(?:^|/)(?:nerdctl|cri-containerd)-` + hex64 + `\.scope(?:/|$)`)
		return Rule{Name: name, Runtime: "containerd", re: re, name: func(m []string) (string, string) {
			return ShortID(m[1]), ""
		}}, nil
	case "podman":
		// rootful /machine.slice/libpod-<id>.scope[/container], rootless under user@<uid>.service;
		// cgroupfs /libpod_parent/libpod-<id>. libpod-conmon-<id>.scope is its monitor, not it.
		re := regexp.MustCompile(`(?:^|/)libpod-` + hex64 + `(?:\.scope)?(?:/|$)`)
		return Rule{Name: name, Runtime: "podman", re: re, name: func(m []string) (string, string) {
			return ShortID(m[1]), ""
		}}, nil
	case "systemd":
		// a service of the system manager: /system.slice/cron.service -> cron
		re := regexp.MustCompile(`^/system\.slice/([^/]+)\.service(?:/|$)`)
		return Rule{Name: name, Runtime: "systemd", re: re, name: func(m []string) (string, string) {
			return m[1], ""
		}}, nil
	}
	return Rule{}, fmt.Errorf("unknown container rule %q (known: tally, kubernetes, docker, containerd, podman, systemd)", name)
}

// CustomRule: a regular expression over the v2 path whose first group is the container.
func CustomRule(expr string) (Rule, error) {
	re, err := regexp.Compile(expr)
	if err != nil {
		return Rule{}, fmt.Errorf("container_regex: %w", err)
	}
	if re.NumSubexp() < 1 {
		return Rule{}, fmt.Errorf("container_regex %q has no group to name the container", expr)
	}
	return Rule{Name: "custom", Runtime: "custom", re: re, name: func(m []string) (string, string) {
		return m[1], ""
	}}, nil
}

// ParseRules: a comma-separated list of rule names (DefaultRules when empty), after a custom
// rule if one is given. tallyRoot is the cgroup whose children are Tally's components.
func ParseRules(names, tallyRoot, custom string) (Rules, error) {
	var rules Rules
	if custom != "" {
		r, err := CustomRule(custom)
		if err != nil {
			return nil, err
		}
		rules = append(rules, r)
	}
	if strings.TrimSpace(names) == "" {
		names = DefaultRules
	}
	seen := map[string]bool{}
	for _, n := range strings.Split(names, ",") {
		n = strings.TrimSpace(n)
		if n == "" || seen[n] {
			continue
		}
		seen[n] = true
		r, err := builtin(n, tallyRoot)
		if err != nil {
			return nil, err
		}
		rules = append(rules, r)
	}
	return rules, nil
}
