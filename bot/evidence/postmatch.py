"""The post-match report for the FA and the Safety Advisory Group: one table row per incident,
the night's figures, when it was made and the export chain's head at that moment. The web
page and the PDF (`matchday report --fixture X --pdf`, fpdf2) are made from the same values."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from bot.domain.clock import parse_iso
from bot.domain.fixture.fixture_model import Fixture
from bot.domain.groundmap import GroundMap
from bot.domain.grounds import Ground
from bot.domain.incident.incident_model import Incident
from bot.domain.plurals import counted
from bot.domain.procedures import target_label
from bot.domain.vocab import OFFENCES, PHASES, STATUSES
from bot.evidence.debrief.pdf import MESSAGE_HEADS, MESSAGE_WIDTHS, draw_map, latin, message_cells
from bot.evidence.debrief.steward_record import MessageRow, read_messages
from bot.evidence.export import chain_head
from bot.evidence.summary import mmss, summary_figures
from bot.store import Store
from bot.store.facades import StoreFacades
from bot.store.feed import Feed


@dataclass(frozen=True)
class IncidentRow:
    """One incident as the report lists it (times local HH:MM, '' when it never happened)."""

    id: str
    severity: int
    type: str
    place: str
    reported: str
    acknowledged: str
    closed: str
    outcome: str
    location: str = ""  # the zone's id: where the map pins it


@dataclass(frozen=True)
class Report:
    """Everything the post-match report shows."""

    fixture: Fixture
    ground: str
    generated_at: datetime
    events: int
    chain_head: str
    figures: dict[str, Any]
    rows: tuple[IncidentRow, ...]
    messages: tuple[MessageRow, ...] = ()  # procedures, missing-person messages, broadcasts
    kickoff: str = ""  # the header's kick-off: recorded, with the plan beside it
    ground_clear: str = ""  # local HH:MM:SS, '' when not recorded


def _hhmm(value: str, tz: ZoneInfo, fmt: str = "%H:%M") -> str:
    return parse_iso(value).astimezone(tz).strftime(fmt) if value else ""


def open_at(inc: Incident, at: str) -> bool:
    """Whether the incident was reported by `at` (ISO) and not closed by then."""
    closed = inc.marks.get("closed_at", "") if inc.status == "closed" else ""
    return bool(at) and parse_iso(inc.reported_at) <= parse_iso(at) and (
        not closed or parse_iso(closed) > parse_iso(at))


def outcome(inc: Incident, clear: str = "") -> str:
    """Where an incident ended: STILL OPEN (at ground clear, when it was), else its status;
    and what came of it. An open incident is never called by its last step alone."""
    if clear and open_at(inc, clear):
        bits = ["STILL OPEN at ground clear" if inc.status != "closed" else
                "OPEN at ground clear, closed after"]
    elif inc.status != "closed":
        bits = ["STILL OPEN"]
    else:
        bits = [STATUSES.label(inc.status)]
    if inc.arrests:
        bits.append(counted(inc.arrests, "arrest"))
    if inc.merged:
        bits.append(f"{inc.merged + 1} reports")
    return ", ".join(bits)


def incident_rows(incidents: list[Incident], ground: Ground, tz: ZoneInfo,
                  clear: str = "") -> list[IncidentRow]:
    """Severity 5 to 1, then in the order reported (`clear`: ground clear, ISO)."""
    out = []
    for inc in sorted(incidents, key=lambda i: (-i.severity, i.reported_at, i.n)):
        out.append(IncidentRow(
            inc.id, inc.severity, inc.what,
            ground.short_label(inc.location, 28), _hhmm(inc.reported_at, tz),
            _hhmm(inc.marks.get("acknowledged_at", ""), tz),
            _hhmm(inc.marks.get("closed_at", ""), tz) if inc.status == "closed" else "",
            outcome(inc, clear), inc.location))
    return out


async def build_report(store: Store, facades: StoreFacades, feed: Feed, fx: Fixture,
                       ground: Ground, tz: ZoneInfo,
                       now: datetime) -> Report:
    """The report of a fixture as the store holds it now (its incidents in report order
    read through the log's feed)."""
    raw = await feed.incidents(fx.id)
    incidents = [Incident.from_hash(h) for h in raw]
    n, head = await chain_head(store, fx.id)
    fig = await summary_figures(store, facades, fx)
    clear = fig["key_timings"].get("ground_clear", "")
    messages = [replace(m, target=target_label(m.target, ground)) for m in
                await read_messages(facades.stewarding, fx.id, await store.events(fx.id))]
    ko = fig["key_timings"].get("kick_off", "")
    planned = f"{fx.kickoff.astimezone(tz):%a %d %b %Y %H:%M}"
    kickoff = (f"kick-off {parse_iso(ko).astimezone(tz):%a %d %b %Y %H:%M:%S} (recorded; "
               f"planned {fx.kickoff.astimezone(tz):%H:%M})" if ko else
               f"planned kick-off {planned} (no kick-off recorded)")
    return Report(fx, ground.name, now.astimezone(tz), n, head, fig,
                  tuple(incident_rows(incidents, ground, tz, clear)), tuple(messages),
                  kickoff, _hhmm(clear, tz, "%H:%M:%S"))


def report_pdf(rep: Report, chart_png: bytes | None, tz: ZoneInfo,
               ground_map: GroundMap | None = None) -> bytes:
    """The report as an A4 PDF (1-2 pages for a night like the seed's), with a light map of
    where the incidents were when the ground has one."""
    from fpdf import FPDF

    fx, fig = rep.fixture, rep.figures
    inc, arr, rt = fig["incidents"], fig["arrests"], fig["response_times"]
    pdf = FPDF(orientation="P", unit="mm", format="A4")
    pdf.set_margins(12, 12, 12)
    pdf.set_auto_page_break(True, 12)
    pdf.add_page()
    pdf.set_font("Helvetica", "B", 15)
    pdf.cell(0, 7, latin(("DRILL - " if fx.drill else "") + fx.title), new_x="LMARGIN",
             new_y="NEXT")
    pdf.set_font("Helvetica", "", 9)
    pdf.multi_cell(0, 4.5, latin(
        f"{fx.competition.replace('_', ' ')} - {rep.ground} - "
        f"{rep.kickoff or fx.kickoff.astimezone(tz).strftime('kick-off %a %d %b %Y %H:%M')}"
        f" - category {fx.category} - phase "
        f"{PHASES.label(fx.phase)}\nGenerated {rep.generated_at:%d %b %Y %H:%M:%S %Z} from "
        f"{rep.events} logged events; export chain head {rep.chain_head}"),
        new_x="LMARGIN", new_y="NEXT", align="L")
    pdf.ln(2)

    def heading(text: str) -> None:
        pdf.set_font("Helvetica", "B", 11)
        pdf.cell(0, 6, latin(text), new_x="LMARGIN", new_y="NEXT")
        pdf.set_font("Helvetica", "", 8.5)

    heading("The night in figures")
    by_sev = inc["by_severity"]
    lines = [
        f"Incidents {inc['total']} (open {inc['open']}, closed {inc['closed']}); by severity "
        + ", ".join(f"S{s} {by_sev.get(str(s), 0)}" for s in range(5, 0, -1)),
        f"Time to acknowledge: median {mmss(rt['median_ack_s'])}, worst "
        f"{mmss(rt['worst_ack_s'])}. Time to close: median {mmss(rt['median_close_s'])}, "
        f"worst {mmss(rt['worst_close_s'])}.",
        f"Arrests {arr['total']} (inside {arr['inside_outside'].get('inside', 0)}, outside "
        f"{arr['inside_outside'].get('outside', 0)}); by offence: "
        + (", ".join(f"{OFFENCES.label(k)} {v}" for k, v in arr["by_offence"].items())
           or "none")
        + f". Banning orders {fig['bans']['total']}. Ejections {fig['ejections']}.",
    ]
    for line in lines:
        pdf.multi_cell(0, 4.5, latin(line), new_x="LMARGIN", new_y="NEXT", align="L")
    pdf.ln(2)
    _still_open_and_procedures(pdf, heading, rep, tz)
    heading("Incidents (severity 5 to 1)")
    widths = (15, 9, 34, 38, 18, 15, 15, 42)
    head = ("INC", "Sev", "What", "Place", "Reported", "Acked", "Closed", "Outcome")
    with pdf.table(col_widths=widths, text_align="LEFT", line_height=4.6,
                   first_row_as_headings=True) as table:
        table.row([latin(h) for h in head])
        for r in rep.rows:
            table.row([latin(v) for v in (r.id, f"S{r.severity}", r.type, r.place, r.reported,
                                           r.acknowledged or "-", r.closed or "-",
                                           r.outcome)])
    _chart_and_map(pdf, heading, chart_png, ground_map, rep.rows)
    return bytes(pdf.output())


def _still_open_and_procedures(pdf: Any, heading: Any, rep: Report, tz: ZoneInfo) -> None:
    """Before the incident table: what was still open at ground clear (every one, flagged),
    and every procedure with who had it by when."""
    still = [r for r in rep.rows if r.outcome.startswith(("STILL OPEN", "OPEN at"))]
    when = f"ground clear ({rep.ground_clear})" if rep.ground_clear else "the report"
    if still:
        heading(f"STILL OPEN at {when}: {len(still)}")
        pdf.multi_cell(0, 4.5, latin("; ".join(f"{r.id} S{r.severity} {r.type} at {r.place} "
                                               f"(reported {r.reported})" for r in still)),
                       new_x="LMARGIN", new_y="NEXT", align="L")
        pdf.ln(2)
    elif rep.ground_clear:
        pdf.multi_cell(0, 4.5, f"Every incident was closed by ground clear ({rep.ground_clear}).",
                       new_x="LMARGIN", new_y="NEXT", align="L")
        pdf.ln(2)
    if not rep.messages:
        return
    heading("Procedures and life-safety messages")
    with pdf.table(col_widths=MESSAGE_WIDTHS, text_align="LEFT", line_height=4.6,
                   first_row_as_headings=True) as table:
        table.row(list(MESSAGE_HEADS))
        for cells in message_cells(rep.messages, tz, str):
            table.row([latin(v) for v in cells])
    pdf.ln(2)


def _chart_and_map(pdf: Any, heading: Any, chart_png: bytes | None,
                   ground_map: GroundMap | None, rows: tuple[IncidentRow, ...]) -> None:
    """The chart and, beside it, a light map of where the incidents were (on a new page
    only when the two do not fit under the table)."""
    import io
    import struct

    wants_map = ground_map is not None and bool(rows)
    if not chart_png and not wants_map:
        return
    gap = 6.0
    map_w = pdf.epw * 0.4 if chart_png else pdf.epw * 0.62
    chart_w = pdf.epw - map_w - gap if wants_map else pdf.epw * 0.8
    chart_h = 0.0
    if chart_png:  # a PNG's size is in its header: width, height at bytes 16-24
        w, h = struct.unpack(">II", chart_png[16:24])
        chart_h = chart_w * h / w
    map_h = 0.0
    if ground_map is not None and wants_map:
        _, _, vw, vh = ground_map.viewbox
        map_h = map_w * vh / vw + 14
    if pdf.get_y() + 10 + max(chart_h, map_h) > pdf.h - pdf.b_margin:
        pdf.add_page()
    pdf.ln(3)
    heading("Incidents per 15 minutes, by phase" if chart_png else "Where the incidents were")
    top = pdf.get_y()
    bottom = top
    if chart_png:
        pdf.image(io.BytesIO(chart_png), x=pdf.l_margin, y=top, w=chart_w)
        bottom = top + chart_h
    if ground_map is not None and wants_map:
        x = pdf.l_margin + (chart_w + gap if chart_png else 0)
        if chart_png:
            pdf.set_xy(x, top - 6)
            pdf.set_font("Helvetica", "B", 11)
            pdf.cell(map_w, 6, "Where the incidents were")
        pdf.set_y(top)
        bottom = max(bottom, draw_map(pdf, ground_map,
                                      [(r.location, r.severity) for r in rows], map_w, x))
    pdf.set_y(bottom + 2)
