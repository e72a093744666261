import socket

import pytest
from tally.settings import Settings
from tally.topic_reader import read_topic


def test_a_broker_that_is_down_is_one_clear_error():
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    settings = Settings.load({"TALLY_KAFKA_PORT": str(port), "TALLY_REGISTRY_PORT": str(port)})
    with pytest.raises(RuntimeError, match=rf"Kafka at 127.0.0.1:{port} did not answer .*is the stack up"):
        read_topic(settings, "tally.alerts", "test")
