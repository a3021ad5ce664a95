"""Evidence export for the FA and SAG: the fixture's event log as JSON Lines and CSV plus a
Markdown report, every event carrying a SHA-256 hash chained to the one before, and a
manifest (file hashes, chain head) signed with the installation's Ed25519 key."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from bot.domain.clock import iso
from bot.domain.fixture.restricted import RESTRICTED_KIND, split_fixture_data
from bot.domain.ledger import Event
from bot.evidence.club_label import labelled
from bot.evidence.csv_cells import write_rows
from bot.evidence.signing import public_hex, sign
from bot.store import Store
from bot.store.facades import StoreFacades
from bot.store.police_records import PoliceRecords

JSONL, CSV, REPORT, MANIFEST, RESTRICTED = ("events.jsonl", "events.csv", "report.md",
                                            "manifest.json", "custody_refs.jsonl")
RESTRICTED_EVENTS = "restricted_events.jsonl"
MANIFEST_FORMAT = 2  # 2: signed (Ed25519); format 1 exports were not signed
PERIOD_FORMAT = "matchday-period-pack-1"  # a month's or season's folder of packs
# Signed documents with no log of their own: format -> what verify calls them
DOCUMENT_FORMATS = {"matchday-stewards-1": "stewards' record",
                    "matchday-martyns-law-1": "Martyn's Law document"}
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
    """SHA-256 of a file's bytes (read in blocks)."""
    h = hashlib.sha256()
    with path.open("rb") as f:
        while block := f.read(1 << 20):
            h.update(block)
    return h.hexdigest()


def signed_part(manifest: dict[str, Any]) -> bytes:
    """The bytes a manifest's signature covers: everything but the signature itself."""
    return canonical({k: v for k, v in manifest.items() if k != "signature"}).encode()


def public_event(ev: Event) -> tuple[Event, dict[str, Any]]:
    """The event as the ordinary export shows it, and the restricted fields it held (fixture
    events logged before restricted fields had a log of their own carried them inline)."""
    if ev.kind not in ("fixture.created", "fixture.changed"):
        return ev, {}
    public, secret = split_fixture_data(ev.data)
    if not secret:
        return ev, {}
    return dataclasses.replace(ev, data=public), secret


def public_records(fixture_id: str, events: list[Event]) -> list[dict[str, Any]]:
    """The ordinary export's chained records of a fixture's log."""
    return chained(fixture_id, [public_event(e)[0] for e in events])


async def chain_head(store: Store, fixture_id: str) -> tuple[int, str]:
    """(events, chain head) of the fixture's ordinary export as it would be written now."""
    records = public_records(fixture_id, await store.events(fixture_id))
    return len(records), records[-1]["hash"] if records else genesis(fixture_id)


def head_detail(fixture_id: str, events: int, head: str) -> str:
    """The audit trail's record of a chain head."""
    return f"fixture={fixture_id} events={events} head={head}"


def restricted_records(store_events: list[Event], restricted: list[Event],
                       fixture_id: str) -> list[dict[str, Any]]:
    """The restricted log, with the restricted fields of older inline fixture events first
    (as events of their own, at their original times), chained from its own genesis."""
    legacy = [Event(kind=RESTRICTED_KIND, at=e.at, by=e.by, role=e.role, phase=e.phase,
                    id=e.id, data={**secret, "inline": True})
              for e in store_events if (secret := public_event(e)[1])]
    return chained(f"{fixture_id}:restricted", sorted(legacy + restricted, key=lambda e: e.at))


async def export_fixture(store: Store, facades: StoreFacades, fixture_id: str, out_dir: Path | str,
                         restricted: bool, by: str = "cli", *, key: Ed25519PrivateKey,
                         at: str = "", unix_user: str = "") -> Path:
    """Write the export folder (custody refs and intelligence only when restricted), sign
    its manifest with key and record the chain head in the audit trail; return the folder."""
    fx = await store.fixture(fixture_id)
    if fx is None:
        raise ValueError(f"no fixture {fixture_id}")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    store_events = await store.events(fixture_id)
    events = [public_event(e)[0] for e in store_events]
    records = chained(fixture_id, events)
    at = at or (events[-1].at if events else iso(fx.kickoff))
    with (out / JSONL).open("w", encoding="utf-8") as f:
        for rec in records:
            f.write(canonical(rec) + "\n")
    with (out / CSV).open("w", encoding="utf-8", newline="") as f:
        write_rows(f, CSV_FIELDS, ([{**rec, "data": canonical(rec["data"])}[k]
                                    for k in CSV_FIELDS] for rec in records))
    head = records[-1]["hash"] if records else genesis(fixture_id)
    from bot.evidence.report import report_markdown

    pub = public_hex(key)
    (out / REPORT).write_text(await report_markdown(store, facades, fx, events, head, pub),
                              encoding="utf-8")
    files = [JSONL, CSV, REPORT]
    (out / RESTRICTED).unlink(missing_ok=True)
    (out / RESTRICTED_EVENTS).unlink(missing_ok=True)
    if restricted:
        refs = await custody_refs(facades.police, fixture_id)
        (out / RESTRICTED).write_text("".join(canonical(r) + "\n" for r in refs),
                                      encoding="utf-8")
        secret = restricted_records(store_events, await facades.views.restricted_events(fixture_id),
                                    fixture_id)
        (out / RESTRICTED_EVENTS).write_text("".join(canonical(r) + "\n" for r in secret),
                                             encoding="utf-8")
        files += [RESTRICTED, RESTRICTED_EVENTS]
        await facades.audit.audit(by, "export.restricted", f"custody refs of {fixture_id} "
                                  f"({len(refs)} records) and its restricted log ({len(secret)} "
                                  "events)", at, unix_user, fixture=fixture_id)
    manifest: dict[str, Any] = {
        "format": MANIFEST_FORMAT, "fixture": fixture_id, "events": len(records),
        "genesis": genesis(fixture_id), "head": head, "restricted": restricted,
        "exported_at": at, "files": {name: file_sha(out / name) for name in files},
        "public_key": pub}
    manifest = labelled(manifest, store)  # whose record it is, under the signature
    manifest["signature"] = sign(key, signed_part(manifest))
    (out / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    await facades.audit.audit(by, "export.head", head_detail(fixture_id, len(records), head),
                              at, unix_user, fixture=fixture_id)
    return out


async def custody_refs(police: PoliceRecords, fixture_id: str) -> list[dict[str, str]]:
    """Custody/occurrence references of arrests and bans (restricted: police and admin)."""
    out = []
    for kind, word in (("arr", "arrest"), ("ban", "ban")):
        for rec in await police.police_records(fixture_id, kind):
            if rec.get("ref") or rec.get("ref_expired_at"):
                out.append({"record": f"{'A' if kind == 'arr' else 'B'}-{rec['n']}",
                            "type": word, "incident": rec.get("incident", ""),
                            "ref": rec.get("ref", ""),
                            "expired_at": rec.get("ref_expired_at", "")})
    return out
