"""Verify an evidence export: recompute the hash chain and name the first altered, removed or
inserted event (in events.jsonl and events.csv), and check the manifest's file hashes."""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bot.evidence.export import CSV, JSONL, MANIFEST, chain_hash, file_sha, genesis


@dataclass
class VerifyResult:
    """The outcome: ok, or the first problem (what, which file, line and event seq)."""

    ok: bool
    events: int = 0
    head: str = ""
    problem: str = ""  # "altered" | "removed" | "inserted" | "unreadable" | "file" | ""
    file: str = ""
    line: int | None = None
    seq: int | None = None
    message: str = ""

    def __str__(self) -> str:
        if self.ok:
            return f"OK: {self.events} events, chain head {self.head}"
        return f"FAILED: {self.message}"


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


def _read_jsonl(path: Path) -> list[dict[str, Any]] | VerifyResult:
    out = []
    # split on "\n" only: str.splitlines() would also cut at U+2028, U+0085, \x1c… inside text
    lines = path.read_text(encoding="utf-8").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    for i, text in enumerate(lines, 1):
        try:
            out.append(json.loads(text))
        except ValueError:
            return _fail("altered", path.name, i, None, "not valid JSON (edited)")
    return out


def _read_csv(path: Path) -> list[dict[str, Any]] | VerifyResult:
    out = []
    with path.open(encoding="utf-8", newline="") as f:
        for i, row in enumerate(csv.DictReader(f), 2):
            try:
                rec: dict[str, Any] = {**row, "seq": int(row["seq"]),
                                       "data": json.loads(row["data"])}
            except (ValueError, KeyError, TypeError):
                return _fail("altered", path.name, i, None, "unreadable row (edited)")
            out.append(rec)
    return out


def verify_dir(directory: Path | str) -> VerifyResult:
    """Recompute the chain of an export folder; OK or the first altered/removed/inserted."""
    d = Path(directory)
    try:
        manifest = json.loads((d / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return _fail("unreadable", MANIFEST, None, None, "missing or unreadable")
    start = manifest.get("genesis") or genesis(manifest.get("fixture", ""))
    if start != genesis(manifest.get("fixture", "")):
        return _fail("altered", MANIFEST, None, None, "genesis does not match the fixture")
    result = VerifyResult(True)
    for name, reader, first in ((JSONL, _read_jsonl, 1), (CSV, _read_csv, 2)):
        if not (d / name).exists():
            return _fail("removed", name, None, None, "file missing")
        records = reader(d / name)
        if isinstance(records, VerifyResult):
            return records
        result = check_chain(records, start, name, first, manifest.get("events"))
        if not result.ok:
            return result
        if result.events != manifest.get("events") or result.head != manifest.get("head"):
            n = result.events
            what = "removed" if n < manifest.get("events", 0) else "inserted"
            return _fail(what, name, first + n - 1 if n else None, n + 1 if what == "removed"
                         else n, f"the log ends at event {n} but the manifest says "
                         f"{manifest.get('events')} events (head differs): event(s) {what} at "
                         "the end")
    for name, digest in manifest.get("files", {}).items():
        if name in (JSONL, CSV):
            continue
        if not (d / name).exists() or file_sha(d / name) != digest:
            return _fail("altered", name, None, None, "file changed since export")
    return result
