from datetime import UTC, datetime

import pytest
from tally import deadletters as dl


def letter(key: bytes | None, reason="UNKNOWN_NAMESPACE", partition=2, offset=64) -> dl.DeadLetter:
    return dl.DeadLetter.of(
        partition,
        offset,
        {
            "reason": reason,
            "message": "namespace 'ghost' does not exist",
            "stage": "timeseries-writer",
            "topic": "tally.timeseries.events",
            "partition": 1,
            "offset": 99,
            "original_key": key,
            "original_value": b"\x00\x00\x00\x00\x01",
            "failed_at": datetime(2026, 11, 23, 13, 38, 43, tzinfo=UTC),
        },
    )


def test_the_namespace_comes_from_the_original_key():
    assert letter(b"ghost/direct-1").namespace == "ghost"
    assert letter(b"sched.runq/host/ctr").namespace == "sched.runq"
    assert letter(None).namespace is None
    assert letter(b"no-separator").namespace is None


def test_filters_by_reason_and_namespace():
    d = letter(b"ghost/x")
    assert dl.matches(d, None, None)
    assert dl.matches(d, "UNKNOWN_NAMESPACE", "ghost")
    assert not dl.matches(d, "INDEX_REJECTED", None)
    assert not dl.matches(d, None, "playback")


def test_a_line_names_the_ref_reason_namespace_and_origin():
    text = dl.line(letter(b"ghost/x"))
    assert text.split()[0] == "2:64"
    assert "UNKNOWN_NAMESPACE" in text and "ghost" in text and "tally.timeseries.events@1:99" in text


def test_refs_are_partition_colon_offset():
    assert dl.parse_ref("2:64") == (2, 64)
    with pytest.raises(ValueError, match="partition:offset"):
        dl.parse_ref("64")
