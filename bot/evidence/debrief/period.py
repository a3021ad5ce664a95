"""Debrief packs of a month or a season for the Safety Advisory Group: one fixture pack per
fixture (each verifiable on its own), a table of the period (CSV and PDF) and a manifest
signed over the period's files and every fixture pack's manifest."""

from __future__ import annotations

import csv
import hashlib
import json
import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from bot.domain.fixture.fixture_model import Fixture
from bot.domain.grounds import Ground
from bot.evidence.club_label import labelled
from bot.evidence.csv_cells import write_rows
from bot.evidence.debrief.pack_folder import Pack, build_pack
from bot.evidence.debrief.pdf import latin
from bot.evidence.export import PERIOD_FORMAT, file_sha, signed_part
from bot.evidence.signing import public_hex, sign
from bot.store import Store
from bot.store.facades import StoreFacades

MONTH = re.compile(r"^\d{4}-(0[1-9]|1[0-2])$")
SEASON = re.compile(r"^(\d{4})-(\d{2})$")
HEAD = ["fixture", "title", "kickoff", "category", "incidents", "severity_4_plus", "arrests",
        "bans", "decisions", "inspection", "pack_pages", "chain_head"]


@dataclass(frozen=True)
class Period:
    """A month ('2026-11') or a season ('2026-27')."""

    kind: str  # "month" or "season"
    value: str

    def holds(self, fx: Fixture, tz: ZoneInfo) -> bool:
        """Whether the fixture is in it (its local kick-off date)."""
        if self.kind == "month":
            return f"{fx.kickoff.astimezone(tz):%Y-%m}" == self.value
        return fx.season == self.value


def parse_period(month: str | None, season: str | None) -> Period:
    """--month 2026-11 or --season 2026-27 (ValueError with a one-line reason)."""
    if month:
        if not MONTH.fullmatch(month):
            raise ValueError(f"--month takes YYYY-MM, e.g. 2026-11 (not {month!r})")
        return Period("month", month)
    m = SEASON.fullmatch(season or "")
    if not m or (int(m.group(1)) + 1) % 100 != int(m.group(2)):
        raise ValueError(f"--season takes YYYY-YY, e.g. 2026-27 (not {season!r})")
    return Period("season", season or "")


def _row(fx: Fixture, pack: Pack) -> list[Any]:
    with (pack.folder / "incidents.csv").open(encoding="utf-8") as f:
        incidents = list(csv.DictReader(f))
    with (pack.folder / "decisions.csv").open(encoding="utf-8") as f:
        decisions = sum(1 for _ in csv.DictReader(f))
    with (pack.folder / "police_counts.csv").open(encoding="utf-8") as f:
        police = {(r["record"], r["category"]): r["count"] for r in csv.DictReader(f)
                  if r["category"] == "total"}
    with (pack.folder / "inspections.csv").open(encoding="utf-8") as f:
        checks = list(csv.DictReader(f))
    failed = {c["item"] for c in checks if c["outcome"] == "fail"}
    inspection = "none" if not checks else f"{len(failed)} item(s) failed" if failed else "passed"
    return [fx.id, fx.title, fx.kickoff.isoformat(), fx.category, len(incidents),
            sum(1 for i in incidents if int(i["severity"]) >= 4),
            police.get(("arrests", "total"), 0), police.get(("bans", "total"), 0), decisions,
            inspection, pack.pages, pack.head]


def _pdf(period: Period, rows: list[list[Any]], tz: ZoneInfo) -> bytes:
    from fpdf import FPDF

    pdf = FPDF(orientation="L", unit="mm", format="A4")
    pdf.set_margins(12, 12, 12)
    pdf.add_page()
    pdf.set_font("Helvetica", "B", 16)
    pdf.cell(0, 9, latin(f"Debrief packs: {period.kind} {period.value}"), new_x="LMARGIN",
             new_y="NEXT")
    pdf.set_font("Helvetica", "", 10)
    pdf.multi_cell(0, 5, latin(f"{len(rows)} fixture(s). Each has its own pack (folder named "
                               "for the fixture, verifiable with matchday verify); arrests and "
                               "banning orders are counts, never names."),
                   new_x="LMARGIN", new_y="NEXT")
    pdf.ln(2)
    with pdf.table(col_widths=(70, 28, 16, 20, 16, 16, 14, 20, 40, 14), text_align="LEFT",
                   line_height=5, first_row_as_headings=True) as t:
        t.row(["Fixture", "Kick-off", "Cat", "Incidents", "S4+", "Arrests", "Bans",
               "Decisions", "Inspection", "Pages"])
        for r in rows:
            kickoff = datetime.fromisoformat(r[2]).astimezone(tz)
            t.row([latin(str(r[1])), f"{kickoff:%d %b %H:%M}", str(r[3]), str(r[4]), str(r[5]),
                   str(r[6]), str(r[7]), str(r[8]), str(r[9]), str(r[10])])
    return bytes(pdf.output())


async def build_period(store: Store, facades: StoreFacades, period: Period, grounds: dict[str,
                                                                                          Ground],
                       config_dir: Path, tz: ZoneInfo, out_dir: Path | str, *,
                       key: Ed25519PrivateKey, at: str = "", by: str = "cli:pack"
                       ) -> tuple[Path, int]:
    """Write the period's folder; (folder, fixtures in it)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    fixtures = [f for f in await store.fixtures() if period.holds(f, tz)]
    rows, subs = [], {}
    for fx in fixtures:
        ground = grounds.get(fx.ground) or next(iter(grounds.values()))
        pack = await build_pack(store, facades, fx, ground, config_dir, tz, out / fx.id, key=key,
                                at=at,
                                by=by)
        rows.append(_row(fx, pack))
        manifest = (pack.folder / "manifest.json").read_bytes()
        subs[f"{fx.id}/manifest.json"] = hashlib.sha256(manifest).hexdigest()
    with (out / "period.csv").open("w", encoding="utf-8", newline="") as f:
        write_rows(f, HEAD, rows)
    (out / "period.pdf").write_bytes(_pdf(period, rows, tz))
    manifest: dict[str, Any] = {
        "format": PERIOD_FORMAT, period.kind: period.value, "exported_at": at,
        "files": {n: file_sha(out / n) for n in ("period.csv", "period.pdf")},
        "fixture_manifests": subs, "public_key": public_hex(key)}
    manifest = labelled(manifest, store)  # whose records, under the signature
    manifest["signature"] = sign(key, signed_part(manifest))
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return out, len(fixtures)
