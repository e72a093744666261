from tally.process import ProcessRef
from tally.state import State


def test_two_writers_never_overwrite_each_others_entries(tmp_path):
    a, b = State(tmp_path / "state.json"), State(tmp_path / "state.json")
    a.record("kafka", process=ProcessRef(10, 100).to_json(), status="running")
    b.record("cassandra", process=ProcessRef(11, 110).to_json(), status="running")
    a.record("kafka", status="running", note="again")  # a's old view must not drop cassandra
    assert b.ref("kafka") == ProcessRef(10, 100)
    assert a.ref("cassandra") == ProcessRef(11, 110)
    b.forget_process("kafka")
    assert a.ref("kafka") is None and a.components["kafka"]["note"] == "again"


def test_missing_or_corrupt_file_reads_as_empty(tmp_path):
    s = State(tmp_path / "state.json")
    assert s.components == {} and s.ref("x") is None
    (tmp_path / "state.json").write_text("{not json")
    assert s.components == {}
