"""Stack settings: documented defaults in infra/tally.env, overridden by the environment."""

from __future__ import annotations

import os
import re
import secrets
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DEFAULTS_FILE = REPO / "infra" / "tally.env"

_LINE = re.compile(r"^\s*(TALLY_[A-Z0-9_]+)\s*=\s*(.*?)\s*$")


def read_env_file(path: Path) -> dict[str, str]:
    """Parses KEY=value lines; '#' starts a comment line. Values are taken literally."""
    values: dict[str, str] = {}
    for line in path.read_text().splitlines():
        if line.lstrip().startswith("#"):
            continue
        m = _LINE.match(line)
        if m:
            values[m.group(1)] = m.group(2)
    return values


@dataclass
class Settings:
    values: dict[str, str] = field(default_factory=dict)

    @classmethod
    def load(cls, environ: dict[str, str] | None = None, defaults: Path = DEFAULTS_FILE) -> Settings:
        env = os.environ if environ is None else environ
        values = read_env_file(defaults)
        for key in list(values):
            if key in env and env[key] != "":
                values[key] = env[key]
        return cls(values)

    def get(self, key: str) -> str:
        if key not in self.values:
            raise KeyError(f"unknown setting {key} (not declared in {DEFAULTS_FILE.name})")
        return self.values[key]

    def port(self, key: str) -> int:
        raw = self.get(key)
        try:
            port = int(raw)
        except ValueError:
            raise ValueError(f"{key}={raw!r} is not a port number") from None
        if not 1 <= port <= 65535:
            raise ValueError(f"{key}={port} is outside 1..65535")
        return port

    def int(self, key: str) -> int:
        raw = self.get(key)
        try:
            return int(raw)
        except ValueError:
            raise ValueError(f"{key}={raw!r} is not a whole number") from None

    @property
    def host(self) -> str:
        return self.get("TALLY_HOST")

    @property
    def home(self) -> Path:
        raw = self.get("TALLY_HOME")
        return Path(raw).resolve() if raw else REPO / ".tally"

    def admin_token(self) -> str:
        """The token that guards the admin API, Recount and registry writes: TALLY_ADMIN_TOKEN when
        set, else $TALLY_HOME/admin-token, made on first use (mode 600) so no stack starts open."""
        given = self.get("TALLY_ADMIN_TOKEN")
        if given:
            return given
        path = self.home / "admin-token"
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w") as f:
                f.write(secrets.token_urlsafe(32))
        return path.read_text().strip()

    def admin_headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.admin_token()}"}

    def dist(self, name: str) -> Path:
        return self.home / "dist" / name

    def data(self, name: str) -> Path:
        return self.home / "data" / name

    def conf(self, name: str) -> Path:
        return self.home / "conf" / name

    def log(self, name: str) -> Path:
        return self.home / "logs" / f"{name}.log"
