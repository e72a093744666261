"""Which failures to connect to a local Cassandra node the launcher tries again."""

import pytest
from cassandra import AuthenticationFailed, Unavailable
from cassandra.cluster import NoHostAvailable
from tally.components.cassandra import auth_unavailable, login_refused, while_peers_unseen


def unavailable() -> Unavailable:
    return Unavailable(
        'Error from server: code=1000 [Unavailable exception] message="Cannot achieve consistency level LOCAL_QUORUM"',
        consistency=6,
        required_replicas=2,
        alive_replicas=1,
    )


def test_a_login_the_node_cannot_check_yet_is_tried_again_and_a_refused_one_is_not():
    # what a third node said in CI (2026-11-26) when its peers were not yet seen alive
    assert auth_unavailable(NoHostAvailable("Unable to complete the operation", {"127.0.0.3:9042": unavailable()}))
    assert not login_refused(NoHostAvailable("Unable to complete the operation", {"127.0.0.3:9042": unavailable()}))
    refused = NoHostAvailable("Unable to connect", {"127.0.0.1:9042": AuthenticationFailed("bad credentials")})
    assert login_refused(refused)
    assert not auth_unavailable(refused)
    assert not auth_unavailable(ConnectionRefusedError("node down"))


def test_a_statement_on_roles_is_tried_again_while_the_node_does_not_see_its_peers():
    now = [0.0]
    answers = [NoHostAvailable("Unable to complete the operation", {"127.0.0.3:9042": unavailable()})] * 3 + ["made"]

    def action():
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    def sleep(seconds):
        now[0] += seconds

    assert while_peers_unseen(action, seconds=60, sleep=sleep, clock=lambda: now[0]) == "made"
    assert now[0] == 3


def test_a_statement_on_roles_gives_up_after_its_time_or_at_once_on_another_error():
    now = [0.0]

    def sleep(seconds):
        now[0] += seconds

    def unseen():
        raise NoHostAvailable("Unable to complete the operation", {"127.0.0.3:9042": unavailable()})

    with pytest.raises(NoHostAvailable):
        while_peers_unseen(unseen, seconds=5, sleep=sleep, clock=lambda: now[0])
    assert 5 <= now[0] <= 7

    def refused():
        raise AuthenticationFailed("bad credentials")

    now[0] = 0.0
    with pytest.raises(AuthenticationFailed):
        while_peers_unseen(refused, seconds=5, sleep=sleep, clock=lambda: now[0])
    assert now[0] == 0.0
