"""Tally's local-stack launcher (in the spirit of Cassandra's ccm)."""

import warnings

# what authlib 1.9 says at every import of its httpx integration (tests/conftest.py filters it too)
AUTHLIB_HTTPX_WARNING = "The httpx module is deprecated"

# confluent-kafka's schema-registry client imports authlib's httpx integration, which authlib
# 1.9 deprecates in favour of httpx2 on every import; authlib's own module puts an "always"
# filter in front of everyone's, so ours goes in after importing it. Nothing of Tally's uses it.
try:
    from authlib.deprecate import AuthlibDeprecationWarning
except ImportError:  # the launcher's first run, before the venv has it
    pass
else:
    warnings.filterwarnings("ignore", message=AUTHLIB_HTTPX_WARNING, category=AuthlibDeprecationWarning)
