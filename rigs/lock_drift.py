"""How far the deploy lock is behind what a fresh install resolves today: one line per locked
package whose installed version differs. CI runs it in the venv it just built with the newest
versions pyproject.toml allows, beside the suite on those versions and the store tests on the
lock's own, so a release that breaks the bot is seen on the day, not on a user's machine.

    python -m rigs.lock_drift deploy/requirements.lock
"""

from __future__ import annotations

import re
import sys
from importlib import metadata
from pathlib import Path

from packaging.utils import canonicalize_name

PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s\\;]+)", re.MULTILINE)
REFRESH = ("pip-compile --generate-hashes --no-emit-find-links --no-emit-index-url "
           "--output-file=deploy/requirements.lock --strip-extras --upgrade pyproject.toml")


def pins(lock: str) -> dict[str, str]:
    """name -> version for every requirement line of a pip-compile lock."""
    return {canonicalize_name(m.group(1)): m.group(2) for m in PIN.finditer(lock)}


def drift(locked: dict[str, str]) -> list[tuple[str, str, str]]:
    """(name, locked, installed) for each locked package installed at another version."""
    out = []
    for name, version in sorted(locked.items()):
        try:
            have = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue  # a platform-only pin (e.g. a Windows shim): nothing to compare
        if have != version:
            out.append((name, version, have))
    return out


def main(argv: list[str]) -> int:
    """Print the drift; always 0 (the test runs on both sets of versions are the verdict)."""
    path = Path(argv[0] if argv else "deploy/requirements.lock")
    rows = drift(pins(path.read_text()))
    if not rows:
        print(f"{path}: in step with the newest versions installed here")
        return 0
    print(f"{path}: {len(rows)} package(s) behind or ahead of a fresh install; refresh with")
    print(f"    {REFRESH}")
    for name, locked, have in rows:
        print(f"  {name}: lock {locked}, fresh install {have}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
