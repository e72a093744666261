"""retrying_admin: the stack's Admin API calls at start-up (topics, the SCRAM user) are tried
again on a transient failure, and only on one."""

import pytest
from confluent_kafka import KafkaError, KafkaException
from tally.components import kafka


def failing(*errors):
    """A call that fails with each error (a KafkaError or its code) in turn, then answers "done";
    its calls counted."""
    calls = []

    def call():
        calls.append(1)
        if len(calls) <= len(errors):
            e = errors[len(calls) - 1]
            raise KafkaException(e if isinstance(e, KafkaError) else KafkaError(e))
        return "done"

    return call, calls


@pytest.fixture(autouse=True)
def no_pause(monkeypatch):
    monkeypatch.setattr(kafka.time, "sleep", lambda s: None)


def test_a_broker_handle_replaced_under_the_request_is_tried_again():
    call, calls = failing(KafkaError._DESTROY_BROKER, KafkaError._TRANSPORT)
    assert kafka.retrying_admin(call) == "done"
    assert len(calls) == 3


def test_a_retriable_error_by_kafkas_own_flag_is_tried_again():
    call, calls = failing(KafkaError(KafkaError.NOT_CONTROLLER, retriable=True))
    assert kafka.retrying_admin(call) == "done"
    assert len(calls) == 2


def test_a_refusal_is_not_tried_again():
    call, calls = failing(KafkaError.POLICY_VIOLATION)
    with pytest.raises(KafkaException):
        kafka.retrying_admin(call)
    assert len(calls) == 1


def test_other_exceptions_are_not_tried_again():
    def call():
        raise ValueError("a bug")

    with pytest.raises(ValueError):
        kafka.retrying_admin(call)


def test_it_gives_up_after_its_attempts():
    call, calls = failing(*[KafkaError._TIMED_OUT] * 9)
    with pytest.raises(KafkaException):
        kafka.retrying_admin(call, attempts=3)
    assert len(calls) == 3
