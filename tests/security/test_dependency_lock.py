"""Issue 20, item 15: deploys install exactly the reviewed dependencies, checked by hash."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]
LOCK = ROOT / "deploy" / "requirements.lock"


def _locked() -> dict[str, tuple[str, list[str]]]:
    """name -> (version, hashes) from the lock's requirement blocks."""
    out: dict[str, tuple[str, list[str]]] = {}
    for block in re.split(r"\n(?=[A-Za-z0-9])", LOCK.read_text()):
        m = re.match(r"([A-Za-z0-9._-]+)==([^\s\\;]+)", block)
        if m:
            out[canonicalize_name(m.group(1))] = (m.group(2),
                                                  re.findall(r"--hash=sha256:[0-9a-f]{64}", block))
    return out


def test_every_runtime_dependency_is_locked_with_hashes() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    locked = _locked()
    for spec in project["dependencies"]:
        req = Requirement(spec)
        name = canonicalize_name(req.name)
        assert name in locked, f"{req.name} is not in {LOCK.name}: refresh it (README)"
        version, _ = locked[name]
        assert req.specifier.contains(version, prereleases=True), \
            f"{LOCK.name} pins {req.name}=={version}, outside pyproject's {req.specifier}"
    unhashed = [name for name, (_, hashes) in locked.items() if not hashes]
    assert not unhashed and len(locked) >= len(project["dependencies"]), unhashed


def test_the_image_installs_from_the_lock_and_checks_every_hash() -> None:
    docker = (ROOT / "deploy" / "Dockerfile").read_text()
    assert "--require-hashes -r deploy/requirements.lock" in docker
    assert "--no-deps ." in docker  # the bot itself resolves nothing again
    assert "--find-links" not in LOCK.read_text()  # nothing from one machine's disk


def test_ci_names_each_locked_package_a_fresh_install_resolves_differently() -> None:
    """#31 item 1: the lock said redis 8.1 while every fresh install took 8.2; CI says so."""
    from importlib import metadata

    from rigs.lock_drift import drift, pins

    locked = pins(LOCK.read_text())
    assert locked["redis"] and locked["python-telegram-bot"]
    behind = dict(locked, redis="8.1.0" if metadata.version("redis") != "8.1.0" else "8.0.0")
    assert ("redis", behind["redis"], metadata.version("redis")) in drift(behind)
