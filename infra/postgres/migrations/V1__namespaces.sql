-- The control plane's source of truth (docs/design.md, "Namespaces and the control plane").
CREATE TABLE IF NOT EXISTS namespaces (
    name       text        PRIMARY KEY,
    kind       text        NOT NULL,
    config     jsonb       NOT NULL,
    version    bigint      NOT NULL DEFAULT 1,
    updated_at timestamptz NOT NULL DEFAULT now()
);
-- Full old rows in change events, so a delete carries the namespace it removed.
ALTER TABLE namespaces REPLICA IDENTITY FULL;

-- A table the stack's smoke test writes to, to prove capture end to end without
-- touching real namespaces.
CREATE TABLE IF NOT EXISTS stack_probe (
    id         bigserial   PRIMARY KEY,
    note       text        NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);

-- What Debezium captures (publication.autocreate.mode=disabled: the launcher owns it).
CREATE PUBLICATION tally_control_pub FOR TABLE namespaces, stack_probe;
