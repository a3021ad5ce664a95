"""Adapters at the edge, domain in the middle: who may import which library."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PLATFORM_LIBS = {"telegram", "slack_bolt", "slack_sdk", "redis"}


def imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.add(node.module.split(".")[0])
    return out


def test_handlers_import_no_platform_or_storage_library():
    for path in sorted((ROOT / "handlers").rglob("*.py")):
        bad = imports(path) & PLATFORM_LIBS
        assert not bad, f"{path.name} imports {bad}"


def test_only_the_adapters_import_their_platform_and_only_the_store_imports_redis():
    for path in sorted((ROOT / "bot").rglob("*.py")):
        found = imports(path)
        if "telegram" in found:
            assert path.name.startswith("telegram"), path.name
        if found & {"slack_bolt", "slack_sdk"}:
            assert path.name.startswith("slack"), path.name
        if "redis" in found:
            # the embedded server manager pings the server it runs; nothing else may
            assert path.name in {"store.py", "embedded_redis.py"}, path.name


def test_nothing_but_settings_reads_the_environment():
    for path in sorted([*(ROOT / "bot").rglob("*.py"), *(ROOT / "handlers").rglob("*.py")]):
        if path.name == "settings.py":
            continue
        assert "os.environ" not in path.read_text(), path.name
