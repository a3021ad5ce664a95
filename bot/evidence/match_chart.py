"""The post-match chart: incidents per 15 minutes by phase, arrests marked (matplotlib, Agg)."""

from __future__ import annotations

import asyncio
import io
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

from bot.domain.clock import parse_iso
from bot.domain.ledger import CHART_BIN_S, FINE_BIN_S, Event
from bot.domain.vocab import PHASES

BIN = timedelta(minutes=15)
PHASE_COLOURS = {"pre": "#9e9e9e", "gates": "#607d8b", "first_half": "#1e88e5",
                 "half_time": "#8e24aa", "second_half": "#43a047", "full_time": "#fb8c00",
                 "egress": "#f4511e", "closed": "#6d4c41"}


@dataclass
class ChartData:
    """Incidents per bin and phase, and arrests per bin (bins start at `start`, 15 min
    unless `bin_s` says otherwise)."""

    start: datetime
    bins: int
    incidents: dict[str, list[int]] = field(default_factory=dict)  # phase -> per bin
    arrests: list[int] = field(default_factory=list)
    bin_s: int = CHART_BIN_S

    @property
    def width(self) -> timedelta:
        """One bin's span."""
        return timedelta(seconds=self.bin_s)


def _floor(t: datetime) -> datetime:
    return t.replace(minute=t.minute - t.minute % 15, second=0, microsecond=0)


def chart_data(events: list[Event]) -> ChartData | None:
    """Bin a fixture's log; None when there is nothing to draw."""
    points: list[tuple[datetime, str, int]] = []  # (time, phase or "", arrests)
    for ev in events:
        if ev.kind == "incident.reported":
            at = parse_iso(ev.data.get("occurred_at") or ev.data.get("reported_at") or ev.at)
            points.append((at, ev.phase or "pre", 0))
        elif ev.kind == "arrest.recorded":
            points.append((parse_iso(ev.at), "", int(ev.data.get("count", 1))))
    if not points:
        return None
    start = _floor(min(p[0] for p in points))
    bins = int((max(p[0] for p in points) - start) / BIN) + 1
    data = ChartData(start, bins, {}, [0] * bins)
    for at, phase, arrests in points:
        i = int((at - start) / BIN)
        if phase:
            row = data.incidents.get(phase)
            if row is None:  # made once per phase (not a new list per point)
                row = data.incidents[phase] = [0] * bins
            row[i] += 1
        data.arrests[i] += arrests
    return data


def chart_from_counts(counts: dict[str, int], fine: bool = False) -> ChartData | None:
    """The same bins as chart_data, from the counters the write script keeps (`fine`: the
    5-minute ones of the live screens)."""
    inc, arr, width = ("f", "b", FINE_BIN_S) if fine else ("i", "a", CHART_BIN_S)
    cells: list[tuple[int, str, int]] = []  # (bin start epoch, phase or "", count)
    for key, n in counts.items():
        kind, _, rest = key.partition(":")
        if kind == inc:
            at, _, phase = rest.partition(":")
            cells.append((int(at), phase or "pre", n))
        elif kind == arr:
            cells.append((int(rest), "", n))
    if not cells:
        return None
    first = min(c[0] for c in cells)
    bins = (max(c[0] for c in cells) - first) // width + 1
    data = ChartData(datetime.fromtimestamp(first, UTC), bins, {}, [0] * bins, width)
    for at, phase, n in cells:
        i = (at - first) // width
        if phase:
            row = data.incidents.get(phase)
            if row is None:  # made once per phase (not a new list per cell: cells x bins)
                row = data.incidents[phase] = [0] * bins
            row[i] += n
        else:
            data.arrests[i] += n
    return data


Mark = tuple[datetime, str]  # a key timing on the chart: when, and its short label


def render_chart(data: ChartData, title: str, tz: ZoneInfo,
                 kickoff: datetime | None = None, marks: tuple[Mark, ...] = ()) -> bytes:
    """A phone-readable PNG (about 1000x600 px) of the binned data. Thread-safe: its own
    Figure on its own Agg canvas, none of pyplot's global state (draw_chart runs it in a
    worker thread)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(8.4, 5.0), dpi=120)
    canvas = FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    xs = list(range(data.bins))
    bottom = [0] * data.bins
    for phase in PHASES.keys():
        ys = data.incidents.get(phase)
        if not ys:
            continue
        ax.bar(xs, ys, bottom=bottom, width=0.85, color=PHASE_COLOURS.get(phase, "#999"),
               label=PHASES.label(phase))
        bottom = [b + y for b, y in zip(bottom, ys, strict=True)]
    top = max(bottom + [1])
    marked = [(x, n) for x, n in zip(xs, data.arrests, strict=True) if n]
    if marked:
        ax.scatter([x for x, _ in marked], [bottom[x] + top * 0.08 for x, _ in marked],
                   marker="v", s=160, color="#d50000", zorder=3, label="Arrests")
        for x, n in marked:
            ax.annotate(str(n), (x, bottom[x] + top * 0.08), textcoords="offset points",
                        xytext=(0, 9), ha="center", fontsize=13, color="#d50000",
                        fontweight="bold")
    lines = ((kickoff, "KO"),) if kickoff is not None else ()
    for at, label in (*lines, *marks):
        x = (at - data.start) / BIN - 0.5
        if -0.5 <= x <= data.bins:
            ax.axvline(x, color="#333", linestyle="--", linewidth=1.2)
            ax.text(x, top * 1.22, f" {label}", fontsize=12, va="top")
    step = max(1, data.bins // 8)
    ax.set_xticks(xs[::step])
    ax.set_xticklabels([f"{(data.start + BIN * x).astimezone(tz):%H:%M}" for x in xs[::step]],
                       fontsize=12)
    ax.tick_params(axis="y", labelsize=12)
    ax.set_ylim(0, top * 1.3)
    ax.yaxis.get_major_locator().set_params(integer=True)
    ax.set_ylabel("Incidents per 15 min", fontsize=13)
    ax.set_title(title, fontsize=15, fontweight="bold")
    ax.legend(fontsize=11, loc="upper center", bbox_to_anchor=(0.5, -0.1), ncols=4,
              frameon=False)
    ax.grid(axis="y", alpha=0.3)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    fig.tight_layout()
    buf = io.BytesIO()
    canvas.print_png(buf)
    return buf.getvalue()


async def draw_chart(data: ChartData, title: str, tz: ZoneInfo,
                     kickoff: datetime | None = None,
                     render: Callable[..., bytes] | None = None,
                     marks: tuple[Mark, ...] = ()) -> bytes:
    """render_chart (or `render`) in a worker thread: drawing, and matplotlib's first import,
    take up to a second, and every other command waits while the event loop is busy."""
    if marks:
        return await asyncio.to_thread(render or render_chart, data, title, tz, kickoff, marks)
    return await asyncio.to_thread(render or render_chart, data, title, tz, kickoff)


def incident_chart(events: list[Event], title: str, tz: ZoneInfo,
                   kickoff: datetime | None = None) -> bytes | None:
    """PNG of a fixture's incidents and arrests, or None when the log has none."""
    data = chart_data(events)
    return render_chart(data, title, tz, kickoff) if data else None


def save_chart(png: bytes, data_dir: Path, name: str = "chart") -> Path:
    """Write a chart under data_dir/charts (console, replay) and return its path."""
    out = Path(data_dir) / "charts"
    out.mkdir(parents=True, exist_ok=True)
    stem = re.sub(r"[^A-Za-z0-9_.-]", "_", name) or "chart"
    path, n = out / f"{stem}.png", 1
    while path.exists():
        n += 1
        path = out / f"{stem}-{n}.png"
    path.write_bytes(png)
    return path
