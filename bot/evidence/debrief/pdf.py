"""The debrief pack's PDF (fpdf2, A4, printable in black and white: severity in words and
numbers, never colour alone)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo

from bot.domain.decision_log import DECISION_KINDS, LogView
from bot.domain.fixture.fixture_model import Fixture
from bot.domain.fixture.key_timings import Timing
from bot.domain.groundmap import SEVERITY_COLOURS, GroundMap, map_name, spread
from bot.domain.inspection_checklist import Check, Item, Readiness, latest
from bot.domain.unreached import radio_list
from bot.domain.vocab import (
    BAN_STATUSES,
    BAN_TYPES,
    OFFENCES,
    PHASES,
    STATUSES,
)
from bot.evidence.debrief.figures import IncidentRow, ResponseRow, TimelineRow
from bot.evidence.debrief.pdf_table import draw_table
from bot.evidence.debrief.steward_record import MessageRow, StewardRecord
from bot.evidence.summary import mmss

if TYPE_CHECKING:
    from fpdf import FPDF

STEPS = (("ack_s", "Acknowledge"), ("on_scene_s", "On scene"), ("close_s", "Close"))


@dataclass
class PackData:
    """Everything the PDF shows, read and worked out already."""

    fixture: Fixture
    ground_name: str
    generated: datetime
    events: int
    chain_head: str
    head_signature: str
    public_key: str
    incidents: list[IncidentRow]
    responses: list[ResponseRow]
    timeline: list[TimelineRow]
    decisions: LogView
    timings: list[Timing]
    items: tuple[Item, ...]
    checks: list[Check]
    readiness: Readiness
    figures: dict[str, Any]
    ground_map: GroundMap | None
    stewarding: StewardRecord | None = None
    ground_clear: datetime | None = None


def kickoff_line(fx: Fixture, timings: list[Timing], tz: ZoneInfo) -> str:
    """'kick-off 19:45:12 (recorded; planned 19:45)', or the plan when none was recorded."""
    planned = f"{fx.kickoff.astimezone(tz):%a %d %b %Y %H:%M}"
    ko = next((t.at for t in timings if t.key == "kick_off"), None)
    if ko is None:
        return f"planned kick-off {planned} (no kick-off recorded)"
    return (f"kick-off {ko.astimezone(tz):%a %d %b %Y %H:%M:%S} (recorded; planned "
            f"{fx.kickoff.astimezone(tz):%H:%M})")


def still_open(rows: list[IncidentRow], clear: datetime | None) -> list[IncidentRow]:
    """Incidents open at ground clear (or, with none recorded, open now), worst first."""
    got = [r for r in rows if (r.open_at(clear) if clear is not None else r.closed_at is None)]
    return sorted(got, key=lambda r: (-r.severity, r.n))


def latin(text: str) -> str:
    """The PDF's core fonts are Latin-1: other characters become '?' rather than failing."""
    for a, b in (("—", "-"), ("–", "-"), ("→", "->"), ("…", "..."), ("·", "-"), ("✔", "OK"),
                 ("✖", "X"), ("‘", "'"), ("’", "'"), ("“", '"'), ("”", '"')):
        text = text.replace(a, b)
    return text.encode("latin-1", "replace").decode("latin-1")


def pack_pdf(d: PackData, tz: ZoneInfo) -> tuple[bytes, int]:
    """The pack as an A4 PDF, and its page count."""
    from fpdf import FPDF

    fx = d.fixture
    pdf = FPDF(orientation="P", unit="mm", format="A4")
    pdf.set_margins(14, 14, 14)
    pdf.set_auto_page_break(True, 14)
    pdf.set_title(latin(f"Debrief pack - {fx.title}"))
    pdf.add_page()

    def heading(text: str) -> None:
        pdf.ln(2)
        pdf.set_font("Helvetica", "B", 13)
        pdf.cell(0, 7, latin(text), new_x="LMARGIN", new_y="NEXT")
        pdf.set_font("Helvetica", "", 10)

    def para(text: str) -> None:
        pdf.multi_cell(0, 5, latin(text), new_x="LMARGIN", new_y="NEXT", align="L")

    def table(widths: tuple[int, ...], head: tuple[str, ...], rows: list[tuple[str, ...]]
              ) -> None:
        draw_table(pdf, widths, tuple(latin(h) for h in head),
                   [tuple(latin(c) for c in r) for r in rows])
        pdf.set_font("Helvetica", "", 10)

    def hm(at: datetime) -> str:
        return f"{at.astimezone(tz):%H:%M:%S}"

    pdf.set_font("Helvetica", "B", 18)
    pdf.multi_cell(0, 9, latin(("DRILL - " if fx.drill else "") + f"Debrief pack: {fx.title}"),
                   new_x="LMARGIN", new_y="NEXT")
    pdf.set_font("Helvetica", "", 10)
    para(f"{fx.competition.replace('_', ' ')} - {d.ground_name} - "
         f"{kickoff_line(fx, d.timings, tz)} - risk category {fx.category}")
    para(f"Generated {d.generated.astimezone(tz):%d %b %Y %H:%M %Z} from {d.events} logged "
         "events. Arrests and banning orders appear as counts only: no names are held.")
    pdf.set_font("Courier", "", 8.5)
    para(f"Export chain head: {d.chain_head}\nSignature of '{fx.id} {d.events} <head>': "
         f"{d.head_signature}\nPublic key: {d.public_key}")
    pdf.set_font("Helvetica", "", 10)
    para("Every file of this pack is listed with its SHA-256 in manifest.json, signed with the "
         "same key; check it with: matchday verify <pack folder> (on this installation: its "
         "own key is used), or anywhere else with --key <public key>.")

    place = d.ground_map.ground.label if d.ground_map is not None else str
    left = still_open(d.incidents, d.ground_clear)
    when = f"ground clear ({hm(d.ground_clear)})" if d.ground_clear else \
        "the end of the log (no ground clear recorded)"
    heading(f"STILL OPEN at {when}: {len(left)}" if left else "Every incident closed")
    if left:
        table((18, 12, 60, 60, 30), ("Incident", "Sev", "What", "Place", "Last status"),
              [(f"INC-{r.n}", f"S{r.severity}", r.what,
                place(r.location), STATUSES.label(r.status)) for r in left])
    else:
        para(f"No incident was open at {when}.")

    heading("Key timings")
    if d.timings:
        table((70, 30, 80), ("Moment", "Time", "Recorded by"),
              [(t.label, f"{t.at.astimezone(tz):%H:%M:%S}", t.by) for t in d.timings])
    else:
        para("No key timings were recorded.")

    heading("Pre-event inspection")
    last = latest(d.checks)
    if d.items:
        rows = []
        for i in d.items:
            c = last.get(i.key)
            result = "not inspected" if c is None else "PASSED" if c.outcome == "pass" else \
                "FAILED" + (f" (INC-{c.incident})" if c.incident else "")
            failed = [f for f in d.checks if f.item == i.key and f.outcome == "fail"]
            if c is not None and c.outcome == "pass" and failed:
                result += f", after FAILED at {hm(failed[0].at)}" + (
                    f" (INC-{failed[0].incident})" if failed[0].incident else "")
            rows.append((i.label, "yes" if i.critical else "no", result,
                         hm(c.at) if c else "-", (c.role if c else i.role).replace("_", " "),
                         str(len(c.photos)) if c else "0"))
        table((64, 16, 36, 18, 30, 16), ("Item", "Critical", "Result", "Time", "By", "Photos"),
              rows)
        r = d.readiness
        para("Ready to open turnstiles: " + (
            "yes, every safety-critical item passed." if not r.blocking else
            f"opened on the Safety Officer's override, decision D-{r.override}."
            if r.override else f"no - {len(r.blocking)} safety-critical item(s) not passed."))
    else:
        para("No inspection checklist is configured for this ground.")

    heading("Decision log")
    if not d.decisions.entries:
        para("No decisions were logged.")
    for dec in d.decisions.entries:
        pdf.set_font("Helvetica", "B", 10)
        later = d.decisions.superseded_by(dec.n)
        kind = f" - {DECISION_KINDS.get(dec.kind, dec.kind)}" if dec.kind not in (
            "", "other") else ""
        para(f"{dec.id} at {dec.at.astimezone(tz):%H:%M:%S} ({PHASES.label(dec.phase)}){kind} - "
             f"{dec.name or dec.by}, {dec.role.replace('_', ' ')}"
             + (f" - SUPERSEDED by D-{later}" if later else ""))
        pdf.set_font("Helvetica", "", 10)
        para(f"Decision: {dec.decision}")
        para(f"Rationale: {d.decisions.rationale_of(dec.n) or '(not given)'}")
        if dec.options:
            para(f"Options considered: {dec.options}")
        extra = [f"incidents {', '.join(f'INC-{i}' for i in dec.incidents)}"] \
            if dec.incidents else []
        if dec.supersedes:
            extra.append(f"supersedes D-{dec.supersedes}")
        if dec.explains:
            extra.append(f"rationale for D-{dec.explains}")
        if dec.source:
            extra.append(f"taken through /{dec.source}")
        if extra:
            text = "; ".join(extra)
            para(text[0].upper() + text[1:] + ".")
        pdf.ln(1)

    heading("Incidents and their outcomes")
    if d.incidents:
        table((16, 10, 40, 50, 18, 48), ("Incident", "Sev", "What", "Place", "Reported",
                                         "Outcome"),
              [(f"INC-{r.n}", f"S{r.severity}", r.what,
                place(r.location), hm(r.reported), r.outcome(d.ground_clear))
               for r in d.incidents])
    else:
        para("No incidents were logged.")

    heading("Response times by severity")
    if d.responses:
        rows = []
        for r in d.responses:
            cells = [f"S{r.severity}", str(r.incidents)]
            for step, _ in STEPS:
                med, worst = r.steps[step]
                cells.append(f"{mmss(med)} / {mmss(worst)}")
            rows.append(tuple(cells))
        table((22, 22, 46, 46, 46), ("Severity", "Incidents", "Acknowledge (median / worst)",
                                     "On scene (median / worst)", "Close (median / worst)"),
              rows)
    else:
        para("No incidents were logged.")

    heading("Arrests and banning orders (counts, never names)")
    arr, bans = d.figures["arrests"], d.figures["bans"]
    io, ha = arr["inside_outside"], arr["home_away"]
    para(f"Arrests: {arr['total']} (inside {io.get('inside', 0)}, outside "
         f"{io.get('outside', 0)}; home {ha.get('home', 0)}, away {ha.get('away', 0)}).")
    if arr["by_offence"]:
        table((120, 30), ("Offence", "Arrests"),
              [(OFFENCES.label(k), str(v)) for k, v in arr["by_offence"].items()])
    para(f"Banning orders: {bans['total']}.")
    if bans["by_type"]:
        table((120, 30), ("Type", "Orders"),
              [(BAN_TYPES.label(k), str(v)) for k, v in bans["by_type"].items()]
              + [(f"status: {BAN_STATUSES.label(k)}", str(v))
                 for k, v in bans["by_status"].items()])

    heading("Stewarding")
    _stewarding(d, tz, para, table,
                d.ground_map.ground.label if d.ground_map is not None else str)

    if d.ground_map is not None and d.incidents:
        vx, vy, vw, vh = d.ground_map.viewbox
        if pdf.get_y() + vh * (pdf.w - 28) / vw + 20 > pdf.h - 14:
            pdf.add_page()
        heading("Where the incidents were")
        draw_map(pdf, d.ground_map, [(r.location, r.severity) for r in d.incidents])
        per_zone: dict[str, list[int]] = {}
        for r in d.incidents:
            per_zone.setdefault(r.location, []).append(r.severity)
        table((110, 30, 40), ("Zone", "Incidents", "Worst severity"),
              [(d.ground_map.ground.label(z), str(len(v)), f"S{max(v)}")
               for z, v in sorted(per_zone.items(), key=lambda kv: (-len(kv[1]), kv[0]))])

    heading(f"Timeline ({len(d.timeline)} entries, as timeline.csv)")
    table((16, 31, 30, 105), ("Time", "What", "Ref", "Detail"),
          [(hm(r.at), r.kind, r.ref, r.text) for r in d.timeline])
    return bytes(pdf.output()), pdf.pages_count


def _stewarding(d: PackData, tz: ZoneInfo, para: Any, table: Any, place: Any) -> None:
    """Fill rates per zone, roll calls, briefing sign-offs, procedures and their "I have
    it" counts against the plan (stewards are counted; only those the bot could not reach are
    named, as the rota has them)."""
    s = d.stewarding
    if s is None or not s.present:
        para("No stewarding deployment or roll call was recorded for this fixture.")
        return

    def where(target: str) -> str:
        return "whole ground" if target == "all" else target if target in (
            "supervisors", "exits") else place(target.removeprefix("zone:"))

    if s.zones:
        planned = sum(z.planned for z in s.zones)
        filled = sum(z.filled for z in s.zones)
        para(f"Deployment: {filled} of {planned} posts filled from the rota "
             f"({round(100 * filled / planned) if planned else 0}%).")
        table((84, 24, 24, 24, 26), ("Zone", "Planned", "Filled", "Fill rate", "On post"),
              [(place(z.zone), str(z.planned), str(z.filled), f"{z.fill_pct}%",
                str(z.on_post)) for z in s.zones])
    if s.roll_calls:
        para("Roll calls (answered: posts checked in on, as /status counts them):")
        table((20, 82, 26, 26, 28), ("Time", "Asked of", "Posts asked", "Answered",
                                     "Missing"),
              [(f"{r.at.astimezone(tz):%H:%M:%S}", where(r.target), str(r.asked),
                str(r.answered), str(r.missing)) for r in s.roll_calls])
    if s.briefing_version:
        para(f"Briefing {s.briefing_version}: read and acknowledged by {s.briefing_acks} "
             f"steward(s)" + (f" of {s.rota_size} on the rota." if s.rota_size else "."))
    else:
        para("No briefing was shown to stewards.")
    if s.messages:
        para(MESSAGES_KEY)
        table(MESSAGE_WIDTHS, MESSAGE_HEADS, message_cells(s.messages, tz, where))
        for m in s.messages:
            if m.reach is not None and m.reach.not_reached:
                para(f"{m.word} {m.at.astimezone(tz):%H:%M:%S} ({m.id}): no delivery recorded "
                     f"to {', '.join(m.reach.not_reached)}.")
            if m.unreached:
                para(f"{m.word} {m.at.astimezone(tz):%H:%M:%S} ({m.id}): {len(m.unreached)} "
                     f"planned steward(s) not on the bot, to radio: {radio_list(m.unreached)}.")
    else:
        para("No procedure or broadcast was issued.")


MESSAGES_KEY = ("Procedures, missing-person messages and broadcasts issued, sent to the "
                "second (reached: targeted stewards whose copy was delivered, a channel post "
                "reaching its members when the platform took it, and when the last of them got "
                "it; have it: stewards who pressed \"I have it\" within 1 and 5 minutes, "
                "in all, and when the last did):")
MESSAGE_WIDTHS = (16, 26, 38, 16, 34, 52)
MESSAGE_HEADS = ("Sent", "Issued", "To", "Sent to", "Reached, last at",
                 "Have it: +1 min / +5 min / all")


def message_cells(messages: Iterable[MessageRow], tz: ZoneInfo, where: Any
                  ) -> list[tuple[str, ...]]:
    """The procedure table's rows (the pack's and the post-match report's): times to the
    second, counts against the plan."""
    def reached(m: MessageRow) -> str:
        r = m.reach
        if r is None or not r.recorded:
            return "not recorded"
        return f"{r.reached} of {m.of}" + (f" by {r.last.astimezone(tz):%H:%M:%S}"
                                            if r.last else "")

    def have(m: MessageRow) -> str:
        soon = " / ".join(str(n) for n in m.reach.acked_soon) + " / " \
            if m.reach is not None else ""
        return f"{soon}{m.acked} of {m.of}" + (f" by {m.acked_by.astimezone(tz):%H:%M:%S}"
                                                if m.acked_by else "")
    return [(f"{m.at.astimezone(tz):%H:%M:%S}", f"{m.word} {m.id}", where(m.target),
             f"{m.sent} of {m.of}", reached(m), have(m)) for m in messages]


def _rgb(hex_colour: str) -> tuple[int, int, int]:
    h = hex_colour.lstrip("#")
    return int(h[0:2], 16), int(h[2:4], 16), int(h[4:6], 16)


SPOTS = ((0.5, 0.5), (0.5, 0.22), (0.5, 0.78), (0.2, 0.5), (0.8, 0.5), (0.2, 0.22),
         (0.8, 0.22), (0.2, 0.78), (0.8, 0.78))  # where in a stand its name may go
CLEAR = 9.0  # mm from a pin's centre (its radius is 3.8) for a name to stay readable


def _stand_names(pdf: FPDF, gm: GroundMap, pt: Any, pins: list[tuple[float, float]]) -> None:
    """Each stand's name on the map (grey, under the pins, 8 pt like every word of the
    pack), a tall stand's written along it, at the spot of the stand farthest from every
    pin so no pin hides it."""
    pdf.set_text_color(110, 110, 110)
    size = 8
    pdf.set_font("Helvetica", "B", size)
    for zid, s in gm.zones.items():
        if s.kind != "stand" or not s.rect:
            continue
        x, y, w, h = s.rect
        tall = h > w
        spots = [pt(x + w * (fy if tall else fx), y + h * (fx if tall else fy))
                 for fx, fy in SPOTS]
        # a pin's count sits below it: measure to both; the first spot clear of every pin
        # by CLEAR mm, else the one farthest from them
        room = [min((min((p[0] - px) ** 2 + (p[1] - py) ** 2,
                         (p[0] - px) ** 2 + (p[1] - py - 5) ** 2) for px, py in pins),
                    default=CLEAR ** 2) for p in spots]
        best = next((i for i, d in enumerate(room) if d >= CLEAR ** 2),
                    room.index(max(room)))
        cx, cy = spots[best]
        name = latin(map_name(gm, zid))
        tw = pdf.get_string_width(name)
        if tall:
            with pdf.rotation(90, cx, cy):
                pdf.text(cx - tw / 2, cy + size * 0.12, name)
        else:
            pdf.text(cx - tw / 2, cy + size * 0.12, name)
    pdf.set_text_color(0, 0, 0)


def draw_map(pdf: FPDF, gm: GroundMap, incidents: list[tuple[str, int]],
             width: float | None = None, x: float | None = None) -> float:
    """Zone outlines and one pin per zone of (zone, severity) pairs: the worst severity in
    it (S4) and how many incidents, in text as well as colour, pins pushed apart so none
    covers another; `width` mm wide at `x` (the page's width). Returns the bottom (mm)."""
    vx, vy, vw, vh = gm.viewbox
    width = width or pdf.w - pdf.l_margin - pdf.r_margin
    scale = width / vw
    ox, oy = pdf.l_margin if x is None else x, pdf.get_y() + 2

    def pt(x: float, y: float) -> tuple[float, float]:
        return ox + (x - vx) * scale, oy + (y - vy) * scale

    pdf.set_draw_color(150, 150, 150)
    pdf.set_line_width(0.2)
    for shape in [*gm.decor, *gm.zones.values()]:
        if shape.rect:
            x0, y0 = pt(shape.rect[0], shape.rect[1])
            pdf.rect(x0, y0, shape.rect[2] * scale, shape.rect[3] * scale)
        elif shape.points:
            pdf.polygon([pt(*p) for p in shape.points])
        elif shape.line:
            pdf.polyline([pt(*p) for p in shape.line])
    per_zone: dict[str, list[int]] = {}
    for zone, severity in incidents:
        if gm.pin(zone) is not None:
            per_zone.setdefault(zone, []).append(severity)
    zones = sorted(per_zone)
    r = 3.8
    # pushed apart, but kept inside the map's own box: a pin (and its count below it) never
    # covers the heading above the map or the caption under it
    left, right = ox + r, ox + vw * scale - r
    top, low = oy + r, oy + vh * scale - r - 3.8
    at = [pt(*gm.pin(z) or (0, 0)) for z in zones]
    for _ in range(4):
        at = [(min(max(px, left), right), min(max(py, top), low))
              for px, py in spread(at, 2 * r + 6)]
    _stand_names(pdf, gm, pt, at)
    pdf.set_draw_color(60, 60, 60)
    for zone, (px, py) in zip(zones, at, strict=True):
        sevs = per_zone[zone]
        worst = max(sevs)
        pdf.set_fill_color(*_rgb(SEVERITY_COLOURS.get(worst, "#999999")))
        pdf.circle(px, py, r, style="FD")
        pdf.set_font("Helvetica", "B", 8)
        pdf.set_xy(px - r, py - 2)
        pdf.cell(2 * r, 4, f"S{worst}", align="C")
        pdf.set_font("Helvetica", "", 8)
        pdf.set_fill_color(255, 255, 255)  # the count stays readable over outlines
        label = f"{len(sevs)} inc."
        lw = pdf.get_string_width(label) + 1
        pdf.set_xy(px - lw / 2, py + r + 0.3)
        pdf.cell(lw, 3.4, label, align="C", fill=True)
    bottom = oy + vh * scale + 5
    pdf.set_font("Helvetica", "", 8)
    pdf.set_fill_color(255, 255, 255)
    pdf.set_xy(ox, bottom)
    pdf.multi_cell(width, 3.8, latin("Each pin: the worst severity in that zone (S1 log only "
                                     "... S5 major incident) and how many incidents."),
                   new_x="LMARGIN", new_y="NEXT")
    return pdf.get_y()
