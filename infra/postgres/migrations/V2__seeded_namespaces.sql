-- Which seed namespaces (infra/namespaces/*.json) ./tally up has inserted, so each seed goes in
-- once: a seed namespace deleted through the admin API stays deleted on the next up.
CREATE TABLE IF NOT EXISTS seeded_namespaces (
    name      text        PRIMARY KEY,
    seeded_at timestamptz NOT NULL DEFAULT now()
);
