"""What the launcher hands a server when it runs as root: the service user, no capability but
the ones named, and a refusal of user names that are no names (or root)."""

import pytest
from tally import privileges


def test_a_server_drops_to_the_service_user_with_no_capability(monkeypatch):
    monkeypatch.setattr(privileges, "is_root", lambda: True)
    argv = privileges.drop(["java", "-jar", "x.jar"], "tally")
    assert argv[: argv.index("java")] == [
        "setpriv",
        "--reuid=tally",
        "--regid=tally",
        "--clear-groups",
        "--inh-caps=-all",
        "--bounding-set=-all",
    ]
    assert argv[-3:] == ["java", "-jar", "x.jar"]


def test_the_exporter_keeps_only_the_capabilities_it_names(monkeypatch):
    monkeypatch.setattr(privileges, "is_root", lambda: True)
    argv = privileges.drop(["runq-exporter"], "tally", ("bpf", "perfmon"))
    assert "--ambient-caps=-all,+bpf,+perfmon" in argv
    assert "--bounding-set=-all,+bpf,+perfmon" in argv
    assert "--inh-caps=-all,+bpf,+perfmon" in argv


def test_a_launcher_that_is_not_root_starts_servers_as_itself(monkeypatch):
    monkeypatch.setattr(privileges, "is_root", lambda: False)
    assert privileges.drop(["java"], "tally", ("bpf",)) == ["java"]


@pytest.mark.parametrize("name", ["root", "", "a b", "x;rm", "-r", "A" * 40])
def test_a_service_user_that_is_root_or_no_name_is_refused(name):
    with pytest.raises(ValueError):
        privileges.ensure_user(name)


def test_this_processes_uid_is_read_from_proc():
    import os

    assert privileges.uid_of(os.getpid()) == os.geteuid()
    assert privileges.uid_of(2**22 + 12345) is None
