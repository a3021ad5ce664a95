"""An evidence export made by the CLI, and its canonical form."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.cli import matchday

FIXTURE = "drill-westham-chelsea-20261202"


def canonical(obj) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def export(env: dict, folder: Path) -> Path:
    p = matchday("export", "--fixture", FIXTURE, "--out", str(folder), env=env)
    assert p.returncode == 0, p.stderr
    return folder
