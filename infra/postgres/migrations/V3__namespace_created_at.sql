-- When the namespace was created: a namespace deleted and created again under its name is a new
-- one (its counters start from zero), and the jobs and gateways tell the two apart by this.
-- Existing rows get the time of this migration.
ALTER TABLE namespaces ADD COLUMN IF NOT EXISTS created_at timestamptz NOT NULL DEFAULT now();
