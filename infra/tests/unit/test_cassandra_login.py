"""Which failures to connect to a local Cassandra node the launcher tries again."""

from cassandra import AuthenticationFailed, Unavailable
from cassandra.cluster import NoHostAvailable
from tally.components.cassandra import auth_unavailable, login_refused


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
