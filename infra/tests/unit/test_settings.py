import pytest
from tally.settings import DEFAULTS_FILE, REPO, Settings, read_env_file


def test_defaults_file_documents_every_key_with_a_value():
    values = read_env_file(DEFAULTS_FILE)
    assert values["TALLY_KAFKA_PORT"] == "9092"
    assert values["TALLY_POSTGRES_PORT"] == "55432"
    assert values["TALLY_HOST"] == "127.0.0.1"


def test_environment_overrides_defaults_and_empty_means_default():
    s = Settings.load({"TALLY_KAFKA_PORT": "19092", "TALLY_FLINK_PORT": ""})
    assert s.port("TALLY_KAFKA_PORT") == 19092
    assert s.port("TALLY_FLINK_PORT") == 8081


def test_home_defaults_to_repo_dot_tally_and_is_overridable(tmp_path):
    assert Settings.load({}).home == REPO / ".tally"
    assert Settings.load({"TALLY_HOME": str(tmp_path)}).home == tmp_path


@pytest.mark.parametrize("raw", ["abc", "0", "70000"])
def test_bad_ports_are_rejected_with_the_key_named(raw):
    s = Settings.load({"TALLY_KAFKA_PORT": raw})
    with pytest.raises(ValueError, match="TALLY_KAFKA_PORT"):
        s.port("TALLY_KAFKA_PORT")


def test_unknown_setting_is_an_error():
    with pytest.raises(KeyError, match="TALLY_NOPE"):
        Settings.load({}).get("TALLY_NOPE")


def test_comments_and_blank_lines_are_ignored(tmp_path):
    f = tmp_path / "x.env"
    f.write_text("# TALLY_A=1\n\nTALLY_B = two words \nnot a setting\n")
    assert read_env_file(f) == {"TALLY_B": "two words"}


def test_the_admin_token_is_made_once_private_and_kept(tmp_path):
    s = Settings.load({"TALLY_HOME": str(tmp_path)})
    token = s.admin_token()
    path = tmp_path / "admin-token"
    assert len(token) >= 32 and path.read_text() == token
    assert path.stat().st_mode & 0o777 == 0o600
    assert Settings.load({"TALLY_HOME": str(tmp_path)}).admin_token() == token, "kept across runs"
    assert s.admin_headers() == {"Authorization": f"Bearer {token}"}


def test_a_given_admin_token_wins_and_no_file_is_made(tmp_path):
    s = Settings.load({"TALLY_HOME": str(tmp_path), "TALLY_ADMIN_TOKEN": "given"})
    assert s.admin_token() == "given"
    assert not (tmp_path / "admin-token").exists()


def test_a_kafka_cluster_id_never_reads_as_an_option():
    from tally.components.kafka import _kafka_uuid

    ids = [_kafka_uuid() for _ in range(2000)]  # one in 64 random ids starts with '-'
    assert not any(i.startswith("-") for i in ids)
    assert all(len(i) == 22 for i in ids)
