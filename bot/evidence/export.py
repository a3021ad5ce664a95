"""Evidence export for the FA and SAG: the fixture's event log as JSON Lines and CSV plus a
Markdown report, every event carrying a SHA-256 hash chained to the one before."""

from __future__ import annotations

import csv
import hashlib
import json
from pathlib import Path
from typing import Any

from bot.domain.clock import iso
from bot.domain.ledger import Event
from bot.store import Store

JSONL, CSV, REPORT, MANIFEST, RESTRICTED = ("events.jsonl", "events.csv", "report.md",
                                            "manifest.json", "custody_refs.jsonl")
CSV_FIELDS = ["seq", "id", "at", "kind", "by", "role", "phase", "data", "prev", "hash"]


def canonical(body: dict[str, Any]) -> str:
    """The one JSON text a record is hashed as."""
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def genesis(fixture_id: str) -> str:
    """The 'previous hash' of a fixture's first event."""
    return hashlib.sha256(f"matchday:{fixture_id}".encode()).hexdigest()


def chain_hash(prev: str, body: dict[str, Any]) -> str:
    """SHA-256 of the previous hash and this record's canonical JSON."""
    return hashlib.sha256((prev + "\n" + canonical(body)).encode()).hexdigest()


def body_of(seq: int, ev: Event) -> dict[str, Any]:
    """The hashed part of an exported event."""
    return {"seq": seq, "id": ev.id, "at": ev.at, "kind": ev.kind, "by": ev.by, "role": ev.role,
            "phase": ev.phase, "data": ev.data}


def chained(fixture_id: str, events: list[Event]) -> list[dict[str, Any]]:
    """Events as export records with prev and hash."""
    prev, out = genesis(fixture_id), []
    for seq, ev in enumerate(events, 1):
        body = body_of(seq, ev)
        h = chain_hash(prev, body)
        out.append({**body, "prev": prev, "hash": h})
        prev = h
    return out


def file_sha(path: Path) -> str:
    """SHA-256 of a file's bytes."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


async def export_fixture(store: Store, fixture_id: str, out_dir: Path | str,
                         restricted: bool, by: str = "cli") -> Path:
    """Write the export folder (custody refs only when restricted); return the folder."""
    fx = await store.fixture(fixture_id)
    if fx is None:
        raise ValueError(f"no fixture {fixture_id}")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    events = await store.events(fixture_id)
    records = chained(fixture_id, events)
    with (out / JSONL).open("w", encoding="utf-8") as f:
        for rec in records:
            f.write(canonical(rec) + "\n")
    with (out / CSV).open("w", encoding="utf-8", newline="") as f:
        w = csv.DictWriter(f, CSV_FIELDS)
        w.writeheader()
        for rec in records:
            w.writerow({**rec, "data": canonical(rec["data"])})
    head = records[-1]["hash"] if records else genesis(fixture_id)
    from bot.evidence.report import report_markdown

    (out / REPORT).write_text(await report_markdown(store, fx, events, head), encoding="utf-8")
    files = [JSONL, CSV, REPORT]
    (out / RESTRICTED).unlink(missing_ok=True)
    if restricted:
        refs = await custody_refs(store, fixture_id)
        (out / RESTRICTED).write_text("".join(canonical(r) + "\n" for r in refs),
                                      encoding="utf-8")
        files.append(RESTRICTED)
        await store.audit(by, "export.restricted", f"custody refs of {fixture_id} "
                          f"({len(refs)} records)", iso(fx.kickoff) if not events
                          else events[-1].at)
    manifest = {"fixture": fixture_id, "events": len(records), "genesis": genesis(fixture_id),
                "head": head, "restricted": restricted,
                "files": {name: file_sha(out / name) for name in files}}
    (out / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return out


async def custody_refs(store: Store, fixture_id: str) -> list[dict[str, str]]:
    """Custody/occurrence references of arrests and bans (restricted: police and admin)."""
    out = []
    for kind, word in (("arr", "arrest"), ("ban", "ban")):
        for rec in await store.police_records(fixture_id, kind):
            if rec.get("ref") or rec.get("ref_expired_at"):
                out.append({"record": f"{'A' if kind == 'arr' else 'B'}-{rec['n']}",
                            "type": word, "incident": rec.get("incident", ""),
                            "ref": rec.get("ref", ""),
                            "expired_at": rec.get("ref_expired_at", "")})
    return out
