"""Issue 20, item 7: an evidence export cannot be forged end to end. A reviewer deleted every
arrest from an export, recomputed the hash chain and the manifest, and `matchday verify` said
OK. Now the manifest is signed with the installation's Ed25519 key: a forgery without that key
fails, a forger's own key is named (and refused with --key), and the chain heads recorded in
the audit trail at close and at export catch a rewritten log."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import re
import stat
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from tests.support.cli import (
    SCENARIO,
    matchday,
)
from tests.support.export import (  # noqa: F401 (fixtures)
    FIXTURE,
    canonical,
    export,
)


def forge(folder: Path, keep, sign_with: Ed25519PrivateKey | None = None) -> None:
    """Rewrite an export as a forger would: drop events, recompute the chain, the CSV, the
    manifest's count, head and file hashes; re-sign with the forger's own key if given."""
    manifest = json.loads((folder / "manifest.json").read_text())
    records = [json.loads(x) for x in (folder / "events.jsonl").read_text().split("\n") if x]
    prev, out = manifest["genesis"], []
    for seq, rec in enumerate((r for r in records if keep(r)), 1):
        body = {k: v for k, v in rec.items() if k not in ("prev", "hash")} | {"seq": seq}
        h = hashlib.sha256((prev + "\n" + canonical(body)).encode()).hexdigest()
        out.append({**body, "prev": prev, "hash": h})
        prev = h
    (folder / "events.jsonl").write_text("".join(canonical(r) + "\n" for r in out))
    buf = io.StringIO()
    w = csv.DictWriter(buf, ["seq", "id", "at", "kind", "by", "role", "phase", "data", "prev",
                             "hash"])
    w.writeheader()
    for r in out:
        w.writerow({**r, "data": canonical(r["data"])})
    (folder / "events.csv").write_text(buf.getvalue(), newline="")
    manifest.update(events=len(out), head=prev)
    manifest["files"] = {n: hashlib.sha256((folder / n).read_bytes()).hexdigest()
                         for n in manifest["files"]}
    if sign_with is not None:
        pub = sign_with.public_key().public_bytes(serialization.Encoding.Raw,
                                                  serialization.PublicFormat.Raw).hex()
        manifest["public_key"] = pub
        unsigned = {k: v for k, v in manifest.items() if k != "signature"}
        manifest["signature"] = sign_with.sign(canonical(unsigned).encode()).hex()
    (folder / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")


def no_arrests(rec: dict) -> bool:
    return rec["kind"] != "arrest.recorded"


@pytest.fixture
def night(store, redis_url, tmp_path):  # `store` empties the database first
    env = {"REDIS_URL": redis_url, "MATCHDAY_DATA_DIR": str(tmp_path / "data")}
    p = matchday("replay", str(SCENARIO), "--json", env=env)
    assert p.returncode == 0, p.stderr
    return env


def installation_key(env: dict) -> str:
    p = matchday("keys", env=env)
    assert p.returncode == 0, p.stderr
    [key] = re.findall(r"\b[0-9a-f]{64}\b", p.stdout)
    return key


def test_deleting_the_arrests_and_recomputing_everything_fails_verify(night, tmp_path):
    folder = export(night, tmp_path / "ex")
    assert matchday("verify", str(folder), env=night).returncode == 0
    assert any(json.loads(x)["kind"] == "arrest.recorded"
               for x in (folder / "events.jsonl").read_text().split("\n") if x)
    forge(folder, no_arrests)
    p = matchday("verify", str(folder), env=night)
    assert p.returncode == 1 and p.stdout.startswith("FAILED"), p.stdout + p.stderr
    assert "signature" in p.stdout


def test_a_forgers_own_key_is_named_and_refused_against_the_real_one(night, tmp_path):
    real = installation_key(night)
    folder = export(night, tmp_path / "ex")
    p = matchday("verify", str(folder), "--key", real, env=night)
    assert p.returncode == 0 and real in p.stdout, p.stdout + p.stderr

    forger = Ed25519PrivateKey.generate()
    forge(folder, no_arrests, sign_with=forger)
    theirs = forger.public_key().public_bytes(serialization.Encoding.Raw,
                                              serialization.PublicFormat.Raw).hex()
    p = matchday("verify", str(folder), "--key", real, env=night)
    assert p.returncode == 1 and "FAILED" in p.stdout and theirs in p.stdout, p.stdout
    key_file = tmp_path / "real.pub"
    key_file.write_text(real + "\n")
    p = matchday("verify", str(folder), "--key", str(key_file), env=night)
    assert p.returncode == 1 and "FAILED" in p.stdout, p.stdout
    # without --key on the installation that holds the real key: that key is used (#36)
    p = matchday("verify", str(folder), env=night)
    assert p.returncode == 1 and theirs in p.stdout, p.stdout
    assert "not this installation's" in p.stdout, p.stdout


def test_recorded_chain_heads_catch_a_rewritten_log(night, tmp_path):
    folder = export(night, tmp_path / "ex")
    p = matchday("heads", "--fixture", FIXTURE, env=night)
    assert p.returncode == 0, p.stderr
    closed = re.search(r"fixture\.closed\s+events=\d+ head=([0-9a-f]{64})", p.stdout)
    exported = re.search(r"export\.head\s+events=\d+ head=([0-9a-f]{64})", p.stdout)
    assert closed and exported, p.stdout
    for head in (closed.group(1), exported.group(1)):
        p = matchday("verify", str(folder), "--head", head, env=night)
        assert p.returncode == 0 and "OK" in p.stdout, p.stdout + p.stderr
    forger = Ed25519PrivateKey.generate()
    forge(folder, no_arrests, sign_with=forger)
    theirs = forger.public_key().public_bytes(serialization.Encoding.Raw,
                                              serialization.PublicFormat.Raw).hex()
    for head in (closed.group(1), exported.group(1)):
        # even checked against the forger's own key, the recorded head catches the rewrite
        p = matchday("verify", str(folder), "--head", head, "--key", theirs, env=night)
        assert p.returncode == 1 and "head" in p.stdout, p.stdout + p.stderr


def test_the_key_is_made_once_private_to_the_bots_user(night, tmp_path):
    data = tmp_path / "data"
    first = installation_key(night)
    assert installation_key(night) == first  # the same key on every run
    [key_file] = [f for f in data.rglob("*") if f.is_file() and "BEGIN PRIVATE KEY"
                  in f.read_text(errors="replace")]
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    assert stat.S_IMODE(key_file.parent.stat().st_mode) == 0o700
    assert stat.S_IMODE(data.stat().st_mode) == 0o700
    folder = export(night, tmp_path / "ex")
    assert json.loads((folder / "manifest.json").read_text())["public_key"] == first
    assert first in (folder / "report.md").read_text()
