"""Schemathesis hooks for the registry run (SCHEMATHESIS_HOOKS=registry_hooks).

Every subject a request names gets the run's prefix, in every phase (the stateful one reuses
subjects it read from GET /subjects): the run registers, reconfigures and deletes only subjects of
its own, never a Tally topic's. The global compatibility level is an operation like any other; the
test puts it back."""

import os

import schemathesis

PREFIX = os.environ.get("TALLY_FUZZ_SUBJECT_PREFIX", "fuzz-")


@schemathesis.hook
def before_call(context, case, kwargs):
    subject = (case.path_parameters or {}).get("subject")
    if isinstance(subject, str) and not subject.startswith(PREFIX):
        case.path_parameters = dict(case.path_parameters, subject=PREFIX + subject)
