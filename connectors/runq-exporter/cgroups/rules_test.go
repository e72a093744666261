package cgroups

import (
	"strings"
	"testing"
)

// Container ids and pod uids as the runtimes write them; the paths are cgroup v2 paths as
// each runtime lays them out (systemd and cgroupfs drivers), relative to the v2 mount.
const (
	id  = "3f1c9e2d8a7b6c5d4e3f2a1b0c9d8e7f6a5b4c3d2e1f0a9b8c7d6e5f4a3b2c1d"
	uid = "1c0f4a1e-2b3c-4d5e-8f90-a1b2c3d4e5f6"
)

var uidSlice = strings.ReplaceAll(uid, "-", "_") // systemd unit names have _ for -

func TestEachRuntimesPathsNameTheirContainer(t *testing.T) {
	rules, err := ParseRules(DefaultRules+",systemd", "tally.containers", "")
	if err != nil {
		t.Fatal(err)
	}
	pod := "pod/" + uid + "/3f1c9e2d8a7b"
	for _, c := range []struct{ path, container, runtime string }{
		// Tally's own components (./tally up)
		{"/tally.containers/kafka", "kafka", "tally"},
		{"/tally.containers/flink-taskmanager", "flink-taskmanager", "tally"},
		// Docker: systemd cgroup driver, cgroupfs driver
		{"/system.slice/docker-" + id + ".scope", "3f1c9e2d8a7b", "docker"},
		{"/docker/" + id, "3f1c9e2d8a7b", "docker"},
		// Kubernetes with the systemd driver: burstable, best-effort, guaranteed QoS; containerd, CRI-O, dockershim
		{"/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + uidSlice + ".slice/cri-containerd-" + id + ".scope", pod, "containerd"},
		{"/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" + uidSlice + ".slice/crio-" + id + ".scope", pod, "cri-o"},
		{"/kubepods.slice/kubepods-pod" + uidSlice + ".slice/cri-containerd-" + id + ".scope", pod, "containerd"},
		{"/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + uidSlice + ".slice/docker-" + id + ".scope", pod, "docker"},
		// a kind node: the node's kubelet nests its pods
		{"/system.slice/docker-" + id + ".scope/kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-besteffort.slice/kubelet-kubepods-besteffort-pod" + uidSlice + ".slice/cri-containerd-" + id + ".scope", pod, "containerd"},
		// Kubernetes with the cgroupfs driver
		{"/kubepods/burstable/pod" + uid + "/" + id, pod, "kubernetes"},
		{"/kubepods/pod" + uid + "/" + id, pod, "kubernetes"},
		// containerd without Kubernetes (nerdctl)
		{"/system.slice/nerdctl-" + id + ".scope", "3f1c9e2d8a7b", "containerd"},
		// Podman: rootful (with its inner container cgroup), rootless, cgroupfs
		{"/machine.slice/libpod-" + id + ".scope/container", "3f1c9e2d8a7b", "podman"},
		{"/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-" + id + ".scope", "3f1c9e2d8a7b", "podman"},
		{"/libpod_parent/libpod-" + id, "3f1c9e2d8a7b", "podman"},
		// systemd services (opt-in)
		{"/system.slice/cron.service", "cron", "systemd"},
		{"/system.slice/containerd.service", "containerd", "systemd"},
		// not containers
		{"/machine.slice/libpod-conmon-" + id + ".scope", System, ""},
		{"/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + uidSlice + ".slice", System, ""},
		{"/user.slice/user-1000.slice/session-3.scope", System, ""},
		{"/init.scope", System, ""},
		{"/", System, ""},
		{"/tally.containers", System, ""},
	} {
		container, runtime := rules.Match(c.path)
		if container != c.container || runtime != c.runtime {
			t.Errorf("%s: got (%q, %q), want (%q, %q)", c.path, container, runtime, c.container, c.runtime)
		}
	}
}

func TestSystemdServicesAreOptIn(t *testing.T) {
	rules, _ := ParseRules("", "tally.containers", "")
	if c, _ := rules.Match("/system.slice/cron.service"); c != System {
		t.Fatalf("a service is a container by default: %q", c)
	}
	if rules.String() != DefaultRules {
		t.Fatalf("default rules %q", rules)
	}
}

func TestACustomRuleComesFirstAndNeedsAGroup(t *testing.T) {
	rules, err := ParseRules("docker", "tally.containers", `^/lxc\.payload\.([^/]+)`)
	if err != nil {
		t.Fatal(err)
	}
	if c, rt := rules.Match("/lxc.payload.web/init.scope"); c != "web" || rt != "custom" {
		t.Fatalf("custom: (%q, %q)", c, rt)
	}
	if _, err := ParseRules("", "x", `^/lxc`); err == nil {
		t.Fatal("a custom rule without a group is refused")
	}
	if _, err := ParseRules("docker,lxd", "x", ""); err == nil || !strings.Contains(err.Error(), "lxd") {
		t.Fatalf("an unknown rule is refused by name: %v", err)
	}
}
