"""The state file: which process the launcher started for each component, and how it went."""
from __future__ import annotations

import json
import os
from pathlib import Path

from .process import ProcessRef


class State:
    def __init__(self, path: Path):
        self.path = path
        self.components: dict[str, dict] = {}
        if path.exists():
            self.components = json.loads(path.read_text()).get("components", {})

    def ref(self, name: str) -> ProcessRef | None:
        return ProcessRef.from_json(self.components.get(name, {}).get("process"))

    def record(self, name: str, **fields) -> None:
        entry = self.components.setdefault(name, {})
        entry.update(fields)
        self.save()

    def forget_process(self, name: str) -> None:
        if name in self.components:
            self.components[name].pop("process", None)
            self.save()

    def save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps({"components": self.components}, indent=2, sort_keys=True))
        os.replace(tmp, self.path)
