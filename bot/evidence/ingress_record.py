"""The pack's ingress section: the ingress curve per stand (% of capacity over the evening,
matplotlib), and each alert with its time and what was done about it (ingress_alerts.csv)."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

from bot.domain.clock import parse_iso
from bot.domain.fixture.fixture_model import Fixture
from bot.domain.grounds import Ground
from bot.domain.ingress_plan import IngressPlan
from bot.domain.ledger import Event
from bot.store import Store
from bot.store.facades import StoreFacades

CURVE = "ingress_curve.png"
ALERTS = "ingress_alerts.csv"


@dataclass(frozen=True)
class AlertRow:
    """An alert and the first thing recorded about its place after it (closing or reopening
    an entry point), if anything."""

    at: datetime
    kind: str
    zone: str
    text: str
    done_at: datetime | None = None
    done_by: str = ""
    done: str = ""


def alert_rows(events: list[Event], plan: IngressPlan) -> list[AlertRow]:
    """Each logged alert with what was done about it."""
    actions = [e for e in events if e.kind == "ingress.entry"]
    out = []
    for e in events:
        if e.kind != "ingress.alert":
            continue
        zone = str(e.data.get("zone", ""))
        at = parse_iso(e.at)
        near = {zone} | {x.zone for x in plan.entries_of(zone)} | (
            {plan.entries[zone].stand} if zone in plan.entries else set())
        act = next((a for a in actions if a.data.get("zone") in near and parse_iso(a.at) >= at),
                   None)
        done = "" if act is None else (
            ("closed " if act.data.get("closed") else "reopened ") + str(act.data["zone"])
            + (f": {act.data['note']}" if act.data.get("note") else ""))
        out.append(AlertRow(at, str(e.data.get("alert", "")), zone, str(e.data.get("text", "")),
                            parse_iso(act.at) if act else None, act.by if act else "", done))
    return out


def stand_curves(plan: IngressPlan, bins: dict[str, dict[int, int]]
                 ) -> dict[str, list[tuple[datetime, float]]]:
    """Stand -> (time, % of capacity) at the end of each bin with counts, cumulative."""
    out: dict[str, list[tuple[datetime, float]]] = {}
    for stand in plan.stands.values():
        merged: dict[int, int] = {}
        for e in plan.entries_of(stand.zone):
            for start, n in bins.get(e.zone, {}).items():
                merged[start] = merged.get(start, 0) + n
        total, points = 0, []
        for start in sorted(merged):
            total += merged[start]
            points.append((datetime.fromtimestamp(start, UTC), 100.0 * total / stand.capacity))
        if points:
            out[stand.zone] = points
    return out


def render_curve(curves: dict[str, list[tuple[datetime, float]]], ground: Ground,
                 plan: IngressPlan, alerts: list[AlertRow], title: str, tz: ZoneInfo,
                 kickoff: datetime) -> bytes:
    """The curve per stand as a PNG: % full over time, the alarm levels, kick-off, and a
    marker at each alert on its stand's line."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.dates import DateFormatter
    from matplotlib.figure import Figure

    fig = Figure(figsize=(8.4, 5.0), dpi=120)
    canvas = FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    for zone, points in curves.items():
        xs, ys = [p[0] for p in points], [p[1] for p in points]
        (line,) = ax.plot(xs, ys, linewidth=2, label=ground.short_label(zone))
        for a in alerts:
            stand = plan.entries[a.zone].stand if a.zone in plan.entries else a.zone
            if stand == zone:
                y = next((v for t, v in reversed(points) if t <= a.at), 0.0)
                ax.scatter([a.at], [y], marker="v", s=90, color=line.get_color(), zorder=3)
    for pct in plan.alert_at:
        ax.axhline(pct, color="#d50000", linestyle=":", linewidth=1)
    ax.axhline(100, color="#d50000", linewidth=1.2)
    ax.axvline(kickoff, color="#333", linestyle="--", linewidth=1.2)
    ax.text(kickoff, 104, " KO", fontsize=11)
    ax.set_ylim(0, 110)
    ax.set_ylabel("% of capacity in", fontsize=13)
    ax.xaxis.set_major_formatter(DateFormatter("%H:%M", tz=tz))
    ax.set_title(title + " (▼ alert)", fontsize=14, fontweight="bold")
    ax.legend(fontsize=10, loc="upper left", frameon=False)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    buf = io.BytesIO()
    canvas.print_png(buf)
    return buf.getvalue()


async def write_ingress(store: Store, facades: StoreFacades, fx: Fixture, ground: Ground, out: Path,
                        tz: ZoneInfo) -> list[str]:
    """Write the section's files into the pack folder (none when nothing was counted)."""
    plan = ground.ingress
    if plan is None:
        return []
    curves = stand_curves(plan, await facades.ingress.curve(fx.id))
    if not curves:
        return []
    rows = alert_rows(await store.events(fx.id), plan)
    with (out / ALERTS).open("w", encoding="utf-8", newline="") as f:
        w = csv.writer(f)
        w.writerow(["at", "alert", "zone", "text", "done_at", "done_by", "done"])
        w.writerows([[r.at.isoformat(), r.kind, r.zone, r.text,
                      r.done_at.isoformat() if r.done_at else "", r.done_by, r.done]
                     for r in rows])
    (out / CURVE).write_bytes(render_curve(curves, ground, plan, rows,
                                           f"Ingress · {fx.title}", tz, fx.kickoff))
    return [ALERTS, CURVE]
