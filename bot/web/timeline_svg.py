"""The timeline chart as inline SVG: incidents per 15 minutes, stacked by phase, arrests marked."""

from __future__ import annotations

from datetime import datetime
from html import escape
from zoneinfo import ZoneInfo

from bot.domain.vocab import PHASES
from bot.evidence.match_chart import PHASE_COLOURS, ChartData

W, H = 900, 360
LEFT, RIGHT, TOP, BOTTOM = 56, 16, 24, 84


def render_svg_chart(data: ChartData | None, tz: ZoneInfo,
                     kickoff: datetime | None = None) -> str:
    """An SVG bar chart of the binned log (a short note when there is nothing yet)."""
    if data is None:
        return (f'<svg class="chart" viewBox="0 0 {W} 120" role="img" aria-label="No incidents">'
                '<text x="20" y="60" class="chart-empty">No incidents yet.</text></svg>')
    plot_w, plot_h = W - LEFT - RIGHT, H - TOP - BOTTOM
    totals = [sum(v[i] for v in data.incidents.values()) for i in range(data.bins)]
    top = max([*totals, 1])
    step_y = max(1, round(top / 4))
    bw = plot_w / data.bins
    y_of = lambda v: TOP + plot_h - v / (top * 1.15) * plot_h  # noqa: E731
    out = [f'<svg class="chart" viewBox="0 0 {W} {H}" role="img" '
           f'aria-label="Incidents per {data.bin_s // 60} minutes by phase">']
    for v in range(0, top + 1, step_y):
        y = y_of(v)
        out.append(f'<line class="grid" x1="{LEFT}" x2="{W - RIGHT}" y1="{y:.1f}" y2="{y:.1f}"/>'
                   f'<text class="axis" x="{LEFT - 8}" y="{y + 6:.1f}" text-anchor="end">{v}'
                   "</text>")
    bottom = [0] * data.bins
    for phase in PHASES.keys():
        ys = data.incidents.get(phase)
        if not ys:
            continue
        for i, n in enumerate(ys):
            if not n:
                continue
            y0, y1 = y_of(bottom[i]), y_of(bottom[i] + n)
            out.append(f'<rect x="{LEFT + i * bw + bw * 0.08:.1f}" y="{y1:.1f}" '
                       f'width="{bw * 0.84:.1f}" height="{y0 - y1:.1f}" '
                       f'fill="{PHASE_COLOURS.get(phase, "#999")}">'
                       f"<title>{n} in {escape(PHASES.label(phase))}</title></rect>")
            bottom[i] += n
    for i, n in enumerate(data.arrests):
        if n:
            x, y = LEFT + (i + 0.5) * bw, y_of(bottom[i]) - 10
            out.append(f'<path class="arrest" d="M{x - 9:.1f},{y - 14:.1f} h18 l-9,14 z"/>'
                       f'<text class="arrest-n" x="{x:.1f}" y="{y - 18:.1f}" '
                       f'text-anchor="middle">{n}</text>')
    if kickoff is not None:
        ko = (kickoff - data.start) / data.width
        if 0 <= ko <= data.bins:
            x = LEFT + ko * bw
            out.append(f'<line class="ko" x1="{x:.1f}" x2="{x:.1f}" y1="{TOP}" '
                       f'y2="{TOP + plot_h}"/><text class="axis" x="{x + 4:.1f}" '
                       f'y="{TOP + 14}">KO</text>')
    every = max(1, data.bins // 8)
    for i in range(0, data.bins, every):
        t = (data.start + data.width * i).astimezone(tz)
        out.append(f'<text class="axis" x="{LEFT + i * bw + bw / 2:.1f}" '
                   f'y="{TOP + plot_h + 24}" text-anchor="middle">{t:%H:%M}</text>')
    x = LEFT
    for phase in PHASES.keys():
        if phase not in data.incidents:
            continue
        label = escape(PHASES.label(phase))
        out.append(f'<rect x="{x}" y="{H - 30}" width="16" height="16" '
                   f'fill="{PHASE_COLOURS.get(phase, "#999")}"/>'
                   f'<text class="legend" x="{x + 22}" y="{H - 16}">{label}</text>')
        x += 34 + 11 * len(label)
    if any(data.arrests):
        out.append(f'<path class="arrest" d="M{x},{H - 30} h16 l-8,14 z"/>'
                   f'<text class="legend" x="{x + 22}" y="{H - 16}">Arrests</text>')
    out.append("</svg>")
    return "".join(out)
