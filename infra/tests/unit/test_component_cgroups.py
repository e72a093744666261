import subprocess

import pytest
from tally.component_cgroups import ComponentCgroups, v2_mount

HYBRID = """\
tmpfs /sys/fs/cgroup tmpfs rw,relatime,mode=755 0 0
cgroup /sys/fs/cgroup/cpu cgroup rw,relatime,cpu 0 0
cgroup2 /sys/fs/cgroup/unified cgroup2 rw,relatime 0 0
"""
V2 = "cgroup2 /sys/fs/cgroup cgroup2 rw,nosuid,nodev,noexec,relatime,nsdelegate 0 0\n"
V1 = "cgroup /sys/fs/cgroup/cpu cgroup rw,relatime,cpu 0 0\n"


def test_the_v2_hierarchy_is_found_on_hybrid_and_v2_hosts_and_none_on_v1():
    assert str(v2_mount(HYBRID)) == "/sys/fs/cgroup/unified"
    assert str(v2_mount(V2)) == "/sys/fs/cgroup"
    assert v2_mount(V1) is None


def fake_cgroupfs(tmp_path, name):
    """What the kernel does on mkdir in a cgroup fs: the new cgroup has its cgroup.procs file."""
    d = tmp_path / "tally.containers" / name
    d.mkdir(parents=True)
    (d / "cgroup.procs").write_text("")
    return d


def test_the_spawned_process_joins_its_cgroup_before_it_execs(tmp_path):
    cg = ComponentCgroups("tally.containers", mount=tmp_path, log=lambda *_: None)
    fake_cgroupfs(tmp_path, "kafka")
    procs = cg.prepare("kafka")
    argv = cg.wrap(["sh", "-c", "echo $$"], procs)
    out = subprocess.run(argv, capture_output=True, text=True, check=True)
    # the pid written into cgroup.procs is the server's own (exec keeps it)
    assert procs.read_text().strip() == out.stdout.strip()


def test_a_failed_join_is_said_and_the_server_runs_anyway(tmp_path):
    cg = ComponentCgroups("tally.containers", mount=tmp_path, log=lambda *_: None)
    argv = cg.wrap(["echo", "running"], tmp_path / "missing" / "cgroup.procs")
    r = subprocess.run(argv, capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout == "running\n"
    assert "could not join cgroup" in r.stderr


def test_no_cgroup_where_none_can_be_made_said_once(tmp_path):
    said = []
    cg = ComponentCgroups("tally.containers", mount=None, log=said.append)
    cg.mount = None
    assert cg.prepare("kafka") is None and cg.prepare("gateway") is None
    assert len(said) == 1 and "no cgroup v2" in said[0]
    assert cg.wrap(["java"], None) == ["java"]
    off = ComponentCgroups("tally.containers", enabled=False, mount=tmp_path, log=said.append)
    assert off.prepare("kafka") is None and not (tmp_path / "tally.containers").exists()


def test_names_that_would_leave_the_root_are_refused(tmp_path):
    with pytest.raises(ValueError):
        ComponentCgroups("../etc", mount=tmp_path)
    with pytest.raises(ValueError):
        ComponentCgroups("/abs", mount=tmp_path)
    cg = ComponentCgroups("tally.containers", mount=tmp_path)
    for bad in ("../x", "a/b", "", "Kafka"):
        with pytest.raises(ValueError):
            cg.path(bad)


def test_remove_keeps_a_cgroup_that_still_has_processes(tmp_path):
    said = []
    cg = ComponentCgroups("tally.containers", mount=tmp_path, log=said.append)
    d = fake_cgroupfs(tmp_path, "kafka")
    cg.remove("kafka")  # a plain directory with a file: rmdir fails as on a busy cgroup (ENOTEMPTY)
    assert d.exists()
    (d / "cgroup.procs").unlink()
    cg.remove("kafka")
    cg.remove_root()
    assert not (tmp_path / "tally.containers").exists()


def test_down_removes_every_empty_cgroup_under_the_root_and_keeps_a_busy_one(tmp_path):
    cg = ComponentCgroups("tally.containers", mount=tmp_path, log=lambda *_: None)
    (tmp_path / "tally.containers" / "gateway-2").mkdir(parents=True)  # a second instance's, now empty
    busy = fake_cgroupfs(tmp_path, "victim")  # a file in it: rmdir fails as on a cgroup with a process
    cg.remove_root()
    assert not (tmp_path / "tally.containers" / "gateway-2").exists()
    assert busy.exists()
