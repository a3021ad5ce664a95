"""Verify an evidence export: check the manifest's Ed25519 signature (and, when given, that
it is the installation's key and that a recorded chain head is in the log), recompute the hash
chain and name the first altered, removed or inserted event (in events.jsonl and events.csv),
and check every listed file's hash. Files are read only inside the export folder, regular
files only and up to a size cap."""

from __future__ import annotations

import csv
import io
import json
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from bot.domain.club_record import CLUB_ID
from bot.evidence.club_label import CLUB_FIELD
from bot.evidence.csv_cells import plain
from bot.evidence.export import (
    CSV,
    DOCUMENT_FORMATS,
    JSONL,
    MANIFEST,
    MANIFEST_FORMAT,
    PERIOD_FORMAT,
    chain_hash,
    file_sha,
    genesis,
    signed_part,
)
from bot.evidence.signing import SigningKeyError, parse_public, public_hex, signature_ok

MANIFEST_CAP = 1 << 20  # bytes: a manifest is a few hundred
FILE_CAP = 256 << 20  # bytes per file: a busy night's log is a few MB
HEX64 = re.compile(r"[0-9a-fA-F]{64}")


class Manifest(BaseModel):
    """What verify needs of manifest.json (more keys may be there: the signature covers them)."""

    model_config = ConfigDict(extra="allow", strict=True)
    format: int
    fixture: str
    events: int
    genesis: str
    head: str
    files: dict[str, str]
    public_key: str = ""
    signature: str = ""


@dataclass
class VerifyResult:
    """The outcome: ok, or the first problem (what, which file, line and event seq)."""

    ok: bool
    events: int = 0
    head: str = ""
    # "altered" | "removed" | "inserted" | "unreadable" | "unsigned" | "signature" | "key" |
    # "head" | "path" | ""
    problem: str = ""
    file: str = ""
    line: int | None = None
    seq: int | None = None
    message: str = ""
    key: str = ""  # the public key that signed the manifest
    key_checked: bool = False  # it was compared with a key the operator gave
    key_from: str = ""  # "given", "installation" (this machine's, with its path) or ""
    head_at: int | None = None  # the event whose hash is the head the operator gave
    packs: int | None = None  # a period's folder: how many fixture packs it holds, verified
    record: str = ""  # a signed folder of files (e.g. the stewards' record): what it holds
    club: str = ""  # the club whose records these are, as the signed manifest names it

    @property
    def which_key(self) -> str:
        """Which key the signature was checked against, in words."""
        if self.key_from == "installation":
            return " (this installation's key)"
        if self.key_checked:
            return " (the key given)"
        return (" (the key the pack itself names: nothing here to check it against; compare "
                "it with `matchday keys` on the exporting installation, or pass --key)")

    def __str__(self) -> str:
        if not self.ok:
            return f"FAILED: {self.message}"
        return self._ok_text() + (f"; the records of club {self.club}" if self.club else "")

    def _ok_text(self) -> str:
        if self.packs is not None:
            return (f"OK: period pack of {self.packs} fixture pack(s), each verified; "
                    f"manifest signed by key {self.key}{self.which_key}")
        if self.record:
            return f"OK: {self.record}; manifest signed by key {self.key}{self.which_key}"
        text = f"OK: {self.events} events, chain head {self.head}; manifest signed by key " \
               f"{self.key}{self.which_key}"
        if self.head_at is not None:
            text += f"; the given head is event {self.head_at}'s"
        return text


def _body(rec: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in rec.items() if k not in ("prev", "hash")}


def _fail(problem: str, file: str, line: int | None, seq: int | None, msg: str) -> VerifyResult:
    return VerifyResult(False, problem=problem, file=file, line=line, seq=seq,
                        message=f"{file} line {line}: {msg}" if line else f"{file}: {msg}")


def check_chain(records: list[dict[str, Any]], start: str, file: str,
                first_line: int = 1, total: int | None = None) -> VerifyResult:
    """Walk a chain of records; the first break decides what happened."""
    prev, expected = start, 1
    for i, rec in enumerate(records):
        line = first_line + i
        seq = rec.get("seq")
        own_ok = rec.get("hash") == chain_hash(str(rec.get("prev")), _body(rec))
        links = rec.get("prev") == prev
        if own_ok and links and seq == expected:
            prev, expected = rec["hash"], expected + 1
            continue
        nxt = records[i + 1] if i + 1 < len(records) else None
        if nxt is not None and nxt.get("prev") == prev and nxt.get("seq") == expected:
            return _fail("inserted", file, line, seq,
                         f"an event was inserted before event {expected} (line {line})")
        if nxt is None and total is not None and len(records) > total:
            return _fail("inserted", file, line, seq, "an event was inserted at the end")
        if isinstance(seq, int) and seq > expected and own_ok:
            gone = f"{expected}" if seq == expected + 1 else f"{expected}–{seq - 1}"
            return _fail("removed", file, line, expected, f"event {gone} was removed")
        if not own_ok:
            return _fail("altered", file, line, seq if isinstance(seq, int) else expected,
                         f"event {seq} was altered (its hash no longer matches)")
        if isinstance(seq, int) and seq < expected:
            return _fail("inserted", file, line, seq, f"an event was inserted (line {line})")
        # self-consistent but not linked: the previous event was rewritten with a new hash
        return _fail("altered", file, line - 1, expected - 1,
                     f"event {expected - 1} was altered (event {expected} chained to another "
                     "version of it)")
    return VerifyResult(True, events=len(records), head=prev)


def _open_inside(d: Path, name: object, cap: int) -> Path | VerifyResult:
    """The file `name` of folder d: a plain name, a regular file (no link), within cap."""
    label = str(name)[:80]
    if (not isinstance(name, str) or name in ("", ".", "..") or name != os.path.basename(name)
            or any(c in name for c in "/\\\0")):
        return _fail("path", MANIFEST, None, None,
                     f"file name {label!r} is not a plain name inside the export folder")
    path = d / name
    try:
        st = path.lstat()
    except OSError:
        return _fail("removed", name, None, None, "file missing")
    if not stat.S_ISREG(st.st_mode):
        return _fail("path", name, None, None, "not a regular file (a link or device)")
    if st.st_size > cap:
        return _fail("unreadable", name, None, None,
                     f"{st.st_size} bytes, over the {cap} byte limit")
    return path


def _read_text(path: Path, cap: int) -> str | VerifyResult:
    try:
        with path.open("rb") as f:
            raw = f.read(cap + 1)
    except OSError as exc:
        return _fail("unreadable", path.name, None, None, f"cannot read ({exc.strerror})")
    if len(raw) > cap:
        return _fail("unreadable", path.name, None, None, f"over the {cap} byte limit")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return _fail("altered", path.name, None, None, "not UTF-8 text (edited)")


def _read_jsonl(path: Path) -> list[dict[str, Any]] | VerifyResult:
    text = _read_text(path, FILE_CAP)
    if isinstance(text, VerifyResult):
        return text
    out = []
    # split on "\n" only: str.splitlines() also splits on U+2028, U+2029 and NEL, which
    # canonical JSON (ensure_ascii=False) keeps raw inside people's text
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    for i, line in enumerate(lines, 1):
        try:
            rec = json.loads(line)
        except (ValueError, RecursionError):
            return _fail("altered", path.name, i, None, "not valid JSON (edited)")
        if not isinstance(rec, dict):
            return _fail("altered", path.name, i, None, "not an event record (edited)")
        out.append(rec)
    return out


def _read_csv(path: Path) -> list[dict[str, Any]] | VerifyResult:
    text = _read_text(path, FILE_CAP)
    if isinstance(text, VerifyResult):
        return text
    out, i = [], 1
    rows = csv.DictReader(io.StringIO(text, newline=""))
    try:
        for i, row in enumerate(rows, 2):
            if None in row or None in row.values():
                return _fail("altered", path.name, i, None, "unreadable row (edited)")
            row = {k: plain(v) for k, v in row.items()}
            try:
                rec: dict[str, Any] = {**row, "seq": int(row["seq"]),
                                       "data": json.loads(row["data"])}
            except (ValueError, KeyError, TypeError, RecursionError):
                return _fail("altered", path.name, i, None, "unreadable row (edited)")
            out.append(rec)
    except csv.Error as exc:
        return _fail("altered", path.name, i + 1, None, f"unreadable CSV ({exc})")
    return out


def _manifest(d: Path) -> tuple[dict[str, Any], Manifest] | VerifyResult:
    path = _open_inside(d, MANIFEST, MANIFEST_CAP)
    if isinstance(path, VerifyResult):
        return path
    text = _read_text(path, MANIFEST_CAP)
    if isinstance(text, VerifyResult):
        return text
    try:
        raw = json.loads(text)
        return raw, Manifest.model_validate(raw)
    except (ValueError, RecursionError, ValidationError):
        return _fail("unreadable", MANIFEST, None, None, "not a manifest (unreadable, or a "
                     "field missing or of the wrong type)")


def _signature(raw: dict[str, Any], manifest: Manifest, key: str | None,
               key_from: str) -> VerifyResult | None:
    """None when the manifest is signed, by the given key if one is given; else the failure."""
    if manifest.format < MANIFEST_FORMAT or not manifest.signature:
        return _fail("unsigned", MANIFEST, None, None, "the manifest is not signed, so "
                     "nothing shows who made this export (re-export it with this version)")
    if not signature_ok(manifest.public_key, manifest.signature, signed_part(raw)):
        return _fail("signature", MANIFEST, None, None, "the signature does not match the "
                     "manifest (edited after signing, or not signed by the key it names)")
    return _given_key(manifest.public_key, key, key_from)


def _given_key(public_key: str, key: str | None, key_from: str) -> VerifyResult | None:
    """None when no key is given or the manifest names it; else the failure."""
    if key is None:
        return None
    try:
        given = public_hex(parse_public(key))
    except SigningKeyError as exc:
        return _fail("key", "--key", None, None, str(exc))
    if given != public_key.lower():
        if key_from == "installation":
            return _fail("key", MANIFEST, None, None, f"signed by key {public_key}, not by "
                         f"this installation's key {given}: not this installation's export "
                         "(another installation's? pass --key with its key)")
        return _fail("key", MANIFEST, None, None, f"signed by key {public_key}, "
                     f"not by the given key {given}: not this installation's export")
    return None


def read_key_arg(value: str) -> str:
    """--key: 64 hex digits, or a file whose first word is them (SigningKeyError otherwise)."""
    text = value.strip()
    if not HEX64.fullmatch(text):
        path = Path(value)
        try:
            with path.open("rb") as f:
                words = f.read(4096).decode("utf-8", "replace").split() if path.is_file() \
                    else []
        except OSError:
            words = []
        if not words:
            raise SigningKeyError(f"--key {value[:80]!r} is neither 64 hex digits nor a "
                                  "readable file holding them")
        text = words[0]
    return public_hex(parse_public(text))


def verify_dir(directory: Path | str, key: str | None = None,
               head: str | None = None, key_from: str = "") -> VerifyResult:
    """Check an export folder: signature (by `key` if given; `key_from` "installation" when
    it is this machine's own), chain, file hashes, and that `head` (a chain head recorded in
    the audit trail) is one of its events' hashes."""
    key_from = key_from or ("given" if key is not None else "")
    result = _verify_dir(Path(directory), key, head, key_from)
    if result.ok:
        result.key_from = key_from
    return result


def _verify_dir(d: Path, key: str | None, head: str | None, key_from: str) -> VerifyResult:
    if not d.is_dir():
        return _fail("unreadable", str(d)[:200], None, None, "not an export folder")
    period = _period_manifest(d)
    if period is not None:
        if isinstance(period, VerifyResult):
            return period
        if period["format"] != PERIOD_FORMAT:
            return _verify_files(d, period, key, key_from)
        return _verify_period(d, period, key, key_from)
    read = _manifest(d)
    if isinstance(read, VerifyResult):
        return read
    raw, manifest = read
    failed = _signature(raw, manifest, key, key_from)
    if failed is not None:
        return failed
    start = genesis(manifest.fixture)
    if manifest.genesis != start:
        return _fail("altered", MANIFEST, None, None, "genesis does not match the fixture")
    result = VerifyResult(True)
    hashes: list[str] = []
    for name, reader, first in ((JSONL, _read_jsonl, 1), (CSV, _read_csv, 2)):
        path = _open_inside(d, name, FILE_CAP)
        if isinstance(path, VerifyResult):
            return path
        records = reader(path)
        if isinstance(records, VerifyResult):
            return records
        result = check_chain(records, start, name, first, manifest.events)
        if not result.ok:
            return result
        if result.events != manifest.events or result.head != manifest.head:
            n = result.events
            what = "removed" if n < manifest.events else "inserted"
            return _fail(what, name, first + n - 1 if n else None, n + 1 if what == "removed"
                         else n, f"the log ends at event {n} but the manifest says "
                         f"{manifest.events} events (head differs): event(s) {what} at "
                         "the end")
        hashes = [r["hash"] for r in records]
    for name, digest in manifest.files.items():
        path = _open_inside(d, name, FILE_CAP)
        if isinstance(path, VerifyResult):
            return path
        # the logs are checked record by record against the signed head above (so a CSV
        # saved again with other line endings still verifies); other files byte for byte
        if name not in (JSONL, CSV) and file_sha(path) != digest:
            return _fail("altered", name, None, None, "file changed since export")
    result.key, result.key_checked = manifest.public_key.lower(), key is not None
    result.club = club_named(raw)
    if head is not None:
        want = head.strip().lower()
        if want == start:
            hashes = [start, *hashes]  # the empty log's head: before event 1
        if want not in hashes:
            return _fail("head", MANIFEST, None, None, f"the given head {want[:64]} is no "
                         "event's hash in this log: the log differs from the one recorded")
        result.head_at = hashes.index(want) + (0 if want == start else 1)
    return result


def _period_manifest(d: Path) -> dict[str, Any] | VerifyResult | None:
    """A period folder's manifest (month or season), None when d is a fixture's export."""
    path = _open_inside(d, MANIFEST, MANIFEST_CAP)
    if isinstance(path, VerifyResult):
        return None  # _manifest says what is wrong
    text = _read_text(path, MANIFEST_CAP)
    try:
        raw = json.loads(text) if isinstance(text, str) else None
    except (ValueError, RecursionError):
        return None
    if not isinstance(raw, dict) or not isinstance(raw.get("format"), str) \
            or not raw["format"].startswith("matchday-"):
        return None
    files = raw.get("files")
    subs = raw.get("fixture_manifests") if raw["format"] == PERIOD_FORMAT else {}
    if not (isinstance(subs, dict) and isinstance(files, dict)
            and all(isinstance(v, str) for v in [*subs.values(), *files.values()])
            and isinstance(raw.get("public_key"), str) and isinstance(raw.get("signature"), str)):
        return _fail("unreadable", MANIFEST, None, None, "not a signed manifest (a field "
                     "missing or of the wrong type)")
    return raw


def _signed_files(d: Path, raw: dict[str, Any], key: str | None,
                  key_from: str) -> VerifyResult | None:
    """A signed folder's manifest signature (by the key, when one is given) and every file
    it lists, byte for byte; None when all hold, else the first failure (its file named)."""
    if not raw["signature"] or not signature_ok(raw["public_key"], raw["signature"],
                                                signed_part(raw)):
        return _fail("signature", MANIFEST, None, None, "the signature does not match the "
                     "manifest (edited after signing, or not signed by the key it names)")
    failed = _given_key(raw["public_key"], key, key_from)
    if failed is not None:
        return failed
    for name, digest in raw["files"].items():
        path = _open_inside(d, name, FILE_CAP)
        if isinstance(path, VerifyResult):
            return path
        if file_sha(path) != digest:
            return _fail("altered", name, None, None, "file changed since export")
    return None


def _verify_files(d: Path, raw: dict[str, Any], key: str | None,
                  key_from: str) -> VerifyResult:
    """A signed folder of files (the stewards' record, and any later kind): its manifest
    and every file it lists."""
    failed = _signed_files(d, raw, key, key_from)
    if failed is not None:
        return failed
    what = (f"{DOCUMENT_FORMATS.get(raw['format'], raw['format'])}, "
            f"{len(raw['files'])} file(s) as signed")
    if isinstance(raw.get("rows"), int):
        what += f", {raw['rows']} row(s)"
    return VerifyResult(True, key=raw["public_key"].lower(), key_checked=key is not None,
                        record=what, club=club_named(raw))


def _verify_period(d: Path, raw: dict[str, Any], key: str | None,
                   key_from: str) -> VerifyResult:
    """A period's folder: its signed manifest, its own files byte for byte, and each
    fixture pack it names, by its manifest's hash and then verified as a pack of its own."""
    failed = _signed_files(d, raw, key, key_from)
    if failed is not None:
        return failed
    for name, digest in raw["fixture_manifests"].items():
        folder, _, leaf = name.partition("/")
        if leaf != MANIFEST or not folder or folder != os.path.basename(folder) \
                or folder in (".", ".."):
            return _fail("path", MANIFEST, None, None, f"{name[:80]!r} is not a fixture "
                         "pack's manifest inside this folder")
        path = _open_inside(d / folder, MANIFEST, MANIFEST_CAP)
        if isinstance(path, VerifyResult):
            return _fail("removed", name, None, None, "the fixture pack is missing")
        if file_sha(path) != digest:
            return _fail("altered", name, None, None, "the fixture pack's manifest differs "
                         "from the one the period manifest signed")
        inner = _verify_dir(d / folder, key, None, key_from)
        if not inner.ok:
            inner.message = f"{folder}/{inner.message}"
            return inner
    return VerifyResult(True, key=raw["public_key"].lower(), key_checked=key is not None,
                        packs=len(raw["fixture_manifests"]), club=club_named(raw))


def club_named(raw: dict[str, Any]) -> str:
    """The club a manifest names ("" when none: an export of a single-club deployment, or
    made before exports named their club); anything but a club id is shown quoted."""
    club = raw.get(CLUB_FIELD)
    if not club:
        return ""
    text = str(club)
    return text if CLUB_ID.fullmatch(text) else repr(text[:40])
