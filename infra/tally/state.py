"""The state file: which process the launcher started for each component, and how it went.

Several launchers may run at once (a test runs ./tally up while another holds a Stack), so
every change is a read-modify-write of the file under an exclusive lock: a writer never
overwrites an entry it did not change with a stale copy."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from pathlib import Path

from .process import ProcessRef


class State:
    def __init__(self, path: Path):
        self.path = path
        self.lock_path = path.with_suffix(".lock")

    @property
    def components(self) -> dict[str, dict]:
        return self._read()

    def _read(self) -> dict[str, dict]:
        if not self.path.exists():
            return {}
        try:
            return json.loads(self.path.read_text()).get("components", {})
        except (OSError, ValueError):
            return {}

    @contextlib.contextmanager
    def _locked(self):
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.lock_path, "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def ref(self, name: str) -> ProcessRef | None:
        return ProcessRef.from_json(self._read().get(name, {}).get("process"))

    def record(self, name: str, **fields) -> None:
        with self._locked():
            components = self._read()
            components.setdefault(name, {}).update(fields)
            self._write(components)

    def forget_process(self, name: str) -> None:
        with self._locked():
            components = self._read()
            if name in components:
                components[name].pop("process", None)
                self._write(components)

    def _write(self, components: dict) -> None:
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps({"components": components}, indent=2, sort_keys=True))
        os.replace(tmp, self.path)
