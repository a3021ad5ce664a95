"""`matchday martyns-law --ground X`: the ground's document as martyns_law.pdf and
martyns_law.json under a signed manifest (`matchday verify` checks it), its revision
recorded when the content changed, and the drills' log read from the store."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import tzinfo
from pathlib import Path
from typing import Any

from bot.domain.clock import parse_iso
from bot.domain.grounds import Ground
from bot.domain.rota_reach import short_target
from bot.evidence.club_label import labelled
from bot.evidence.export import MANIFEST, file_sha, signed_part
from bot.evidence.signing import SigningKey, public_hex, sign
from bot.publicprotection.drill_log import DrillRow, drill_rows
from bot.publicprotection.protection_document import FORMAT, ProtectionDocument, digest
from bot.publicprotection.protection_pdf import protection_pdf
from bot.publicprotection.protection_plan import PROCEDURE_KEYS, ProtectionPlan
from bot.store import Store
from bot.store.facades import StoreFacades

PDF, JSON = "martyns_law.pdf", "martyns_law.json"


@dataclass(frozen=True)
class Written:
    """What was written: the folder, the document and whether this run revised it."""

    folder: Path
    document: ProtectionDocument
    revised: bool
    pages: int


async def ground_drills(store: Store, facades: StoreFacades, ground: Ground) -> list[DrillRow]:
    """Every procedure sent in a drill at this ground, oldest drill first."""
    rows: list[DrillRow] = []
    for fx in await store.fixtures(drill=True):
        if fx.ground != ground.id:
            continue
        sent = [b for b in await facades.stewarding.broadcasts(fx.id) if b.kind in PROCEDURE_KEYS]
        acks = {b.id: await facades.protection.ack_times(fx.id, b.id) for b in sent}
        times = await facades.stewarding.reach_times(fx.id, [b.id for b in sent])
        rows += drill_rows(fx, sent, acks, lambda t: short_target(t, ground), PROCEDURE_KEYS,
                           times)
    return rows


async def write_document(store: Store, facades: StoreFacades, plan: ProtectionPlan, ground: Ground,
                         out_dir: Path | str, *, key: SigningKey, at: str, tz: tzinfo,
                         by: str = "cli:martyns-law", unix_user: str = "") -> Written:
    """Revise the document if its content changed, then write the PDF, the JSON and their
    signed manifest."""
    rev, revised = await facades.protection.revise(ground.id, digest(plan), at, by)
    sent_at = next((r.sent_at for r in await facades.protection.revisions(ground.id)
                    if r.n == rev.n), "")
    doc = ProtectionDocument(plan, rev.n, rev.digest, rev.at, parse_iso(at),
                             tuple(await ground_drills(store, facades, ground)), sent_at)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    pdf, pages = protection_pdf(doc, public_hex(key),
                                {z: ground.label(z) for z in ground.zones}, tz)
    (out / PDF).write_bytes(pdf)
    (out / JSON).write_text(json.dumps(doc.as_json(), indent=2, ensure_ascii=False) + "\n",
                            encoding="utf-8")
    manifest: dict[str, Any] = {"format": FORMAT, "ground": ground.id, "revision": rev.n,
                                "content_hash": rev.digest, "exported_at": at,
                                "files": {n: file_sha(out / n) for n in (PDF, JSON)},
                                "public_key": public_hex(key)}
    manifest = labelled(manifest, store)  # whose document, under the signature
    manifest["signature"] = sign(key, signed_part(manifest))
    (out / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    await facades.audit.audit(by, "export.martyns_law", f"{ground.id} revision {rev.n}"
                              + (" (revised)" if revised else ""), at, unix_user)
    return Written(out, doc, revised, pages)
