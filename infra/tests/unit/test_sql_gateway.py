from tally.components.sql_gateway import split_statements


def test_statements_split_at_semicolons_outside_quotes_and_comments():
    text = """SHOW TABLES; SELECT 'a;b' AS `x;y` FROM t /*+ OPTIONS('k'='v') */;
    -- a comment; with a semicolon
    SELECT 1 /* a block; comment */ ;"""
    assert split_statements(text) == [
        "SHOW TABLES",
        "SELECT 'a;b' AS `x;y` FROM t /*+ OPTIONS('k'='v') */",
        "SELECT 1",
    ]


def test_a_single_statement_needs_no_semicolon():
    assert split_statements("SELECT COUNT(*) FROM timeseries_events") == ["SELECT COUNT(*) FROM timeseries_events"]
    assert split_statements(" ;; ") == []


def test_the_catalogs_kafka_security_carries_a_reference_to_the_password_never_the_password(tmp_path, monkeypatch):
    from tally import privileges
    from tally.components.sql_gateway import catalog_kafka_options
    from tally.settings import Settings

    monkeypatch.setattr(privileges, "is_root", lambda: False)
    assert catalog_kafka_options(Settings.load({"TALLY_HOME": str(tmp_path)})) == {
        "bootstrap-servers": "127.0.0.1:9092"
    }
    s = Settings.load(
        {
            "TALLY_HOME": str(tmp_path),
            "TALLY_KAFKA_SECURITY_PROTOCOL": "SASL_SSL",
            "TALLY_KAFKA_SASL_USERNAME": "tally",
            "TALLY_KAFKA_SASL_PASSWORD": "p=a:s#s\\w",
            "TALLY_KAFKA_SSL_TRUSTSTORE": "/etc/tally/ca.pem",
        }
    )
    options = catalog_kafka_options(s)
    props = tmp_path / "service-secrets" / "kafka-client.properties"
    assert options["bootstrap-servers"] == "127.0.0.1:9094"
    assert options["properties.sasl.jaas.config"].endswith(f'password="${{file:{props}:password}}";')
    assert options["properties.config.providers"] == "file"
    assert "p=a:s#s" not in str(options)
    assert props.read_text() == "password=p\\=a\\:s\\#s\\\\w\n" and props.stat().st_mode & 0o777 == 0o600
