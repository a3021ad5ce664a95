"""Issue 20, item 9: `matchday verify` reads only the export folder's own regular files, up to
a size cap. Manifest file names with `../`, absolute paths, links to /dev/zero (which ran out
of memory) and an oversized CSV field (a traceback) each get a one-line FAILED and exit 1."""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import pytest_asyncio
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from bot.store import Store
from tests.support.cli import (
    ROOT,
)
from tests.support.export import (
    canonical,
    export,
)

GIB = 1 << 30


def verify(folder: Path) -> subprocess.CompletedProcess:
    """`matchday verify` with its memory held to 1 GiB (reading /dev/zero must not need it)."""
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (GIB, GIB))

    return subprocess.run([sys.executable, "-m", "bot.cli", "verify", str(folder)],
                          capture_output=True, text=True, timeout=120, cwd=ROOT,
                          preexec_fn=limit)


def resign(folder: Path, change) -> None:
    """Edit the manifest and sign it again with a key of one's own (any key signs: which one
    is for --key to judge), so verify gets as far as the files it names."""
    manifest = json.loads((folder / "manifest.json").read_text())
    change(manifest)
    key = Ed25519PrivateKey.generate()
    manifest["public_key"] = key.public_key().public_bytes(
        serialization.Encoding.Raw, serialization.PublicFormat.Raw).hex()
    unsigned = {k: v for k, v in manifest.items() if k != "signature"}
    manifest["signature"] = key.sign(canonical(unsigned).encode()).hex()
    (folder / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")


def one_line_failure(p: subprocess.CompletedProcess, words: str) -> None:
    text = p.stdout + p.stderr
    assert p.returncode == 1, text
    assert "Traceback" not in text and "Error" not in text, text
    assert len(text.strip().splitlines()) == 1, text
    assert words in text, text


@pytest_asyncio.fixture(scope="module")
async def night_export(redis_url, tmp_path_factory) -> Path:
    """The bundled night replayed and exported once for the module (a replay and an export
    are seconds of subprocesses); each test spoils its own copy."""
    from tests.support.cli import SCENARIO, matchday

    store = Store.from_url(redis_url)
    await store.reset_for_tests()
    await store.close()
    tmp = tmp_path_factory.mktemp("night")
    env = {"REDIS_URL": redis_url, "MATCHDAY_DATA_DIR": str(tmp / "data")}
    assert matchday("replay", str(SCENARIO), "--json", env=env).returncode == 0
    folder = export(env, tmp / "ex")
    assert verify(folder).returncode == 0
    return folder


@pytest.fixture
def exported(night_export, tmp_path):
    return Path(shutil.copytree(night_export, tmp_path / "ex", symlinks=True))


@pytest.mark.parametrize("name", ["../secret.txt", "/etc/hostname", "sub/../../secret.txt"])
def test_names_outside_the_folder_are_refused(exported, tmp_path, name):
    (tmp_path / "secret.txt").write_text("not evidence")
    resign(exported, lambda m: m["files"].update({name: "0" * 64}))
    one_line_failure(verify(exported), "inside the export folder")


def test_a_link_to_dev_zero_is_not_read(exported):
    os.symlink("/dev/zero", exported / "zero.bin")
    resign(exported, lambda m: m["files"].update({"zero.bin": "0" * 64}))
    one_line_failure(verify(exported), "not a regular file")


def test_the_log_itself_as_a_link_to_dev_zero_is_not_read(exported):
    (exported / "events.jsonl").unlink()
    os.symlink("/dev/zero", exported / "events.jsonl")
    one_line_failure(verify(exported), "not a regular file")


def test_a_file_over_the_cap_is_not_read(exported):
    with open(exported / "big.bin", "wb") as f:
        f.truncate(300 << 20)  # sparse: costs no disk
    resign(exported, lambda m: m["files"].update({"big.bin": "0" * 64}))
    one_line_failure(verify(exported), "limit")


def test_an_oversized_csv_field_is_a_one_line_failure(exported):
    rows = (exported / "events.csv").read_bytes().split(b"\r\n")
    rows[1] = rows[1] + b',"' + b"x" * 200_000 + b'"'
    (exported / "events.csv").write_bytes(b"\r\n".join(rows))
    one_line_failure(verify(exported), "events.csv")


def test_a_manifest_of_the_wrong_shape_is_a_one_line_failure(exported):
    (exported / "manifest.json").write_text(json.dumps({"fixture": 7, "files": []}))
    one_line_failure(verify(exported), "manifest")
    (exported / "manifest.json").write_text("[" * 100_000)
    one_line_failure(verify(exported), "manifest")
