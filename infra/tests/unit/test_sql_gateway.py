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
