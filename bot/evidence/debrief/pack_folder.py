"""`matchday pack --fixture X`: the debrief pack folder: pack.pdf, CSVs of incidents (with
their outcomes), decisions, key timings, inspections, response times, police counts,
procedures and the timeline, the evidence export of the log, and one manifest signed over
every file."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from bot.domain.clock import parse_iso
from bot.domain.deployment import posts_of
from bot.domain.fixture.fixture_model import Fixture
from bot.domain.fixture.key_timings import Timing, latest
from bot.domain.groundmap import load_map
from bot.domain.grounds import Ground
from bot.domain.inspection_checklist import checklists, override_of, readiness
from bot.domain.ledger import Event
from bot.evidence.csv_cells import write_rows
from bot.evidence.debrief.figures import TIME_COLUMNS, incident_rows, response_by_severity
from bot.evidence.debrief.pdf import STEPS, PackData, pack_pdf
from bot.evidence.debrief.steward_record import StewardRecord, ack_times, steward_record
from bot.evidence.debrief.timeline import Labels, timeline
from bot.evidence.export import MANIFEST, export_fixture, file_sha, signed_part
from bot.evidence.ingress_record import write_ingress
from bot.evidence.signing import public_hex, sign
from bot.evidence.summary import summary_figures
from bot.store import Store
from bot.store.facades import StoreFacades

PDF = "pack.pdf"


@dataclass(frozen=True)
class Pack:
    """What was written: the folder, its files and the PDF's page count."""

    folder: Path
    files: tuple[str, ...]
    pages: int
    head: str


def _csv(path: Path, head: list[str], rows: list[list[Any]]) -> None:
    with path.open("w", encoding="utf-8", newline="") as f:
        write_rows(f, head, rows)


async def read_steward_record(store: Store, facades: StoreFacades, fx: Fixture, ground: Ground,
                              config_dir: Path, events: list[Event]) -> StewardRecord:
    """The fixture's stewarding section: its deployment, roll calls, briefing sign-offs and
    procedures (with when each acknowledgement came), as the store holds them."""
    state = facades.stewarding
    filled, _ = await state.deployment(fx.id)
    posts = posts_of(config_dir, fx.ground or ground.id, fx.id)
    sent = await state.broadcasts(fx.id)
    times = await state.reach_times(fx.id, [bc.id for bc in sent if bc.kind != "rollcall"])
    return steward_record(posts, filled, await state.on_post(fx.id), sent,
                          await state.briefing_acks(fx.id), ack_times(events), times)


def ground_clear(timings: list[Timing]) -> datetime | None:
    """When the ground was recorded clear (None: it was not)."""
    return next((t.at for t in timings if t.key == "ground_clear"), None)


PROCEDURE_COLUMNS = ["id", "at", "what", "target", "planned", "sent", "reached",
                     "last_received_at", "acknowledged", "acknowledged_by_1min",
                     "acknowledged_by_5min", "last_acknowledged_at", "not_acknowledged",
                     "not_reached"]


def procedure_rows(s: StewardRecord) -> list[list[Any]]:
    """procedures.csv: every procedure, missing-person message and broadcast with its plan,
    reach (how many targeted stewards' copies were delivered, the last when, who not: rota
    names, the radioed ones too) and acknowledgements (times to the second; '' where
    delivery recorded no times)."""
    rows: list[list[Any]] = []
    for m in s.messages:
        r = m.reach
        known = r is not None and r.recorded
        rows.append([m.id, m.at.isoformat(), m.word, m.target, m.of, m.sent,
                     r.reached if r is not None and known else "",
                     m.received.isoformat() if m.received else "", m.acked,
                     *(r.acked_soon if r is not None else ("", "")),
                     m.acked_by.isoformat() if m.acked_by else "", m.of - m.acked,
                     "; ".join([*(r.not_reached if r is not None and known else ()),
                                *(u.show() for u in m.unreached)])])
    return rows


async def build_pack(store: Store, facades: StoreFacades, fx: Fixture, ground: Ground,
                     config_dir: Path,
                     tz: ZoneInfo, out_dir: Path | str, *, key: Ed25519PrivateKey,
                     at: str = "", by: str = "cli:pack") -> Pack:
    """Write the pack folder and sign its manifest; the chain head is recorded in the audit
    trail as any export's is."""
    out = Path(out_dir)
    await export_fixture(store, facades, fx.id, out, False, by=by, key=key, at=at)
    manifest = json.loads((out / MANIFEST).read_text(encoding="utf-8"))
    events = await store.events(fx.id)
    decisions = await facades.decisions.read(fx.id)
    timings = latest(await facades.timings.read(fx.id))
    checks = await facades.inspections.read(fx.id)
    items = checklists(config_dir).get(fx.ground, ())
    override = override_of(decisions)
    rows = incident_rows(events)
    responses = response_by_severity(rows)
    posts = {p.id: p.name for p in posts_of(config_dir, fx.ground or ground.id, fx.id)}
    line = timeline(events, decisions, timings,
                    Labels(ground.label, lambda p: posts.get(p, p)))
    figures = await summary_figures(store, facades, fx)
    stewarding = await read_steward_record(store, facades, fx, ground, config_dir, events)
    clear = ground_clear(timings)
    head, n = manifest["head"], manifest["events"]

    files: list[str] = []

    def write(name: str, head_row: list[str], body: list[list[Any]]) -> None:
        _csv(out / name, head_row, body)
        files.append(name)

    write("incidents.csv", ["id", "type", "what", "severity", "location", "phase", "reported_at",
                            "ack_s", "on_scene_s", "close_s", "status", "closed_at",
                            "open_at_ground_clear", "arrests", "outcome", *TIME_COLUMNS],
          [[f"INC-{r.n}", r.type, r.what, r.severity, r.location, r.phase, r.reported.isoformat(),
            r.ack_s, r.on_scene_s, r.close_s, r.status,
            r.closed_at.isoformat() if r.closed_at else "",
            "yes" if clear is not None and r.open_at(clear) else "no" if clear else "",
            r.arrests, r.outcome(clear), *r.times] for r in rows])
    write("decisions.csv", ["id", "at", "by", "name", "role", "phase", "decision",
                            "rationale", "options", "incidents", "supersedes", "explains",
                            "source", "superseded_by", "type"],
          [[d.id, d.at.isoformat(), d.by, d.name, d.role, d.phase, d.decision,
            decisions.rationale_of(d.n), d.options, " ".join(f"INC-{i}" for i in d.incidents),
            f"D-{d.supersedes}" if d.supersedes else "",
            f"D-{d.explains}" if d.explains else "", d.source,
            f"D-{s}" if (s := decisions.superseded_by(d.n)) else "", d.kind]
           for d in decisions.entries])
    write("key_timings.csv", ["key", "label", "at", "by"],
          [[t.key, t.label, t.at.isoformat(), t.by] for t in timings])
    labels = {i.key: i for i in items}
    write("inspections.csv", ["item", "label", "critical", "outcome", "at", "by", "role",
                              "note", "photos", "incident"],
          [[c.item, labels[c.item].label if c.item in labels else c.item,
            labels[c.item].critical if c.item in labels else "", c.outcome, c.at.isoformat(),
            c.by, c.role, c.note, len(c.photos), f"INC-{c.incident}" if c.incident else ""]
           for c in checks])
    write("response_times.csv", ["severity", "incidents"]
          + [f"{step}_{m}" for step, _ in STEPS for m in ("median", "worst")],
          [[r.severity, r.incidents] + [v for step, _ in STEPS for v in r.steps[step]]
           for r in responses])
    arr, bans = figures["arrests"], figures["bans"]
    write("police_counts.csv", ["record", "category", "value", "count"],
          [["arrests", "total", "", arr["total"]]]
          + [["arrests", "offence", k, v] for k, v in arr["by_offence"].items()]
          + [["arrests", "inside_outside", k, v] for k, v in arr["inside_outside"].items()]
          + [["arrests", "home_away", k, v] for k, v in arr["home_away"].items()]
          + [["bans", "total", "", bans["total"]]]
          + [["bans", "type", k, v] for k, v in bans["by_type"].items()]
          + [["bans", "status", k, v] for k, v in bans["by_status"].items()])
    if stewarding.present:
        write("stewarding.csv", ["section", "ref", "at", "what", "target", "planned_or_asked",
                                 "filled_or_answered", "on_post_or_missing"],
              [["deployment", z.zone, "", "posts", z.zone, z.planned, z.filled, z.on_post]
               for z in stewarding.zones]
              + [["roll_call", r.id, r.at.isoformat(), "roll call", r.target, r.asked,
                  r.answered, r.missing] for r in stewarding.roll_calls]
              + [["briefing", stewarding.briefing_version, "", "briefing read", "rota",
                  stewarding.rota_size, stewarding.briefing_acks, ""]]
              + [["procedure" if m.procedure else "broadcast", m.id, m.at.isoformat(),
                  m.word, m.target, m.of, m.acked, m.of - m.acked]
                 for m in stewarding.messages])
    write("procedures.csv", PROCEDURE_COLUMNS, procedure_rows(stewarding))
    write("timeline.csv", ["at", "kind", "ref", "text", "event"],
          [[r.at.isoformat(), r.kind, r.ref, r.text, r.event] for r in line])

    generated = parse_iso(at) if at else datetime.now(tz)
    data = PackData(fx, ground.name, generated, n, head,
                    sign(key, f"{fx.id} {n} {head}".encode()), public_hex(key), rows, responses,
                    line, decisions, timings, items, checks,
                    readiness(items, checks, override), figures, load_map(config_dir, ground),
                    stewarding, clear)
    files += await write_ingress(store, facades, fx, ground, out, tz)  # the curve per stand, alerts
    pdf, pages = pack_pdf(data, tz)
    (out / PDF).write_bytes(pdf)
    files.append(PDF)

    manifest["files"].update({name: file_sha(out / name) for name in files})
    manifest["pack"] = {"pages": pages, "fixture_title": fx.title}
    manifest.pop("signature", None)
    manifest["signature"] = sign(key, signed_part(manifest))
    (out / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return Pack(out, tuple(sorted(manifest["files"])), pages, head)
