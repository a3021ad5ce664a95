"""The ground map: zone shapes from the ground file, drawn as SVG with incident pins."""

from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass, field
from html import escape
from pathlib import Path
from typing import Any

from bot.domain.grounds import Ground
from bot.domain.plurals import counted

# Painted bottom-up, so the small zones people click sit on top of the stands they belong to.
DRAW_ORDER = ("outside", "concourse", "stand", "blocks", "walkway", "perimeter", "gate",
              "segregation")
PIN_R = 26
SEVERITY_COLOURS = {1: "#8d99ae", 2: "#2a9d8f", 3: "#e9c46a", 4: "#f4a261", 5: "#e63946"}


@dataclass(frozen=True)
class Shape:
    """One drawable: a zone's outline or a decoration (pitch, corners, labels)."""

    kind: str
    rect: tuple[float, ...] = ()
    points: tuple[tuple[float, float], ...] = ()
    line: tuple[tuple[float, float], ...] = ()
    text: str = ""
    at: tuple[float, float] | None = None
    short: str = ""

    def inside(self, other: Shape) -> bool:
        """Does this rectangle lie within another (both rectangles)?"""
        if not (self.rect and other.rect) or self is other:
            return False
        x, y, w, h = self.rect
        ox, oy, ow, oh = other.rect
        return ox <= x and oy <= y and x + w <= ox + ow and y + h <= oy + oh

    def centre(self) -> tuple[float, float]:
        """Where a pin goes by default."""
        if self.rect:
            x, y, w, h = self.rect
            return x + w / 2, y + h / 2
        pts = self.points or self.line
        if not pts:
            return self.at or (0.0, 0.0)
        if self.line:  # the middle vertex of a line
            return pts[len(pts) // 2]
        return sum(p[0] for p in pts) / len(pts), sum(p[1] for p in pts) / len(pts)


@dataclass
class GroundMap:
    """A ground's drawable layout: viewbox, decorations, and each zone's shape and pin."""

    ground: Ground
    viewbox: tuple[float, float, float, float]
    decor: list[Shape] = field(default_factory=list)
    zones: dict[str, Shape] = field(default_factory=dict)
    pins: dict[str, tuple[float, float]] = field(default_factory=dict)

    def pin(self, zone_id: str) -> tuple[float, float] | None:
        """Where incidents at a zone are pinned (None: the zone is not on the map)."""
        return self.pins.get(zone_id)


def _shape(d: dict[str, Any], kind: str) -> Shape:
    return Shape(kind=kind, rect=tuple(d.get("rect", ())),
                 points=tuple(tuple(p) for p in d.get("points", ())),  # type: ignore[misc]
                 line=tuple(tuple(p) for p in d.get("line", ())),  # type: ignore[misc]
                 text=str(d.get("text", "")), short=str(d.get("map_label") or d.get("short", "")),
                 at=tuple(d["at"]) if "at" in d else None)  # type: ignore[arg-type]


def load_map(config_dir: Path, ground: Ground) -> GroundMap:
    """The map of a ground from its TOML file (zones without a shape are left off)."""
    path = config_dir / "grounds" / f"{ground.id}.toml"
    data = tomllib.loads(path.read_text()) if path.exists() else {}
    m = data.get("map", {})
    gm = GroundMap(ground, tuple(m.get("viewbox", (0, 0, 1000, 800))))  # type: ignore[arg-type]
    gm.decor = [_shape(s, s.get("kind", "decor")) for s in m.get("shape", [])]
    for z in data.get("zone", []):
        if not any(k in z for k in ("rect", "points", "line")):
            continue
        shape = _shape(z, z.get("kind", "zone"))
        gm.zones[z["id"]] = shape
        if "pin" in z:
            gm.pins[z["id"]] = tuple(z["pin"])  # type: ignore[assignment]
        elif shape.kind == "gate" and shape.rect:  # beside the gate's name, not over it
            x, y, w, h = shape.rect
            gm.pins[z["id"]] = (x + w + 28, y + h / 2)
        else:
            gm.pins[z["id"]] = shape.centre()
    return gm


def _outline(s: Shape, attrs: str) -> str:
    if s.rect:
        x, y, w, h = s.rect
        return f'<rect x="{x}" y="{y}" width="{w}" height="{h}" rx="4" {attrs}/>'
    if s.points:
        pts = " ".join(f"{x},{y}" for x, y in s.points)
        return f'<polygon points="{pts}" {attrs}/>'
    if s.line:
        pts = " ".join(f"{x},{y}" for x, y in s.line)
        return f'<polyline points="{pts}" {attrs}/>'
    return ""


LABEL_PX, LABEL_EM = 22, 0.62  # zone-label font size (control.css) and mean glyph width


def map_name(gm: GroundMap, zone_id: str) -> str:
    """A zone's name as printed on the map."""
    return gm.zones[zone_id].short or gm.ground.label(zone_id).split(" (")[0]


def render_map(gm: GroundMap, pins: str = "") -> str:
    """The map as an inline SVG; `pins` is the pin layer (see pin_layer)."""
    vb = " ".join(str(v) for v in gm.viewbox)
    # a group, not an image: its zones and pins are buttons of their own
    out = [f'<svg class="ground" viewBox="{vb}" role="group" '
           f'aria-label="Map of {escape(gm.ground.name)}">',
           f"<title>{escape(gm.ground.name)}</title>"]
    for d in gm.decor:
        if d.kind == "label" and d.at:
            out.append(f'<text class="decor-label" x="{d.at[0]}" y="{d.at[1]}">'
                       f"{escape(d.text)}</text>")
        else:
            out.append(_outline(d, f'class="decor {escape(d.kind)}"'))
            if d.kind == "pitch" and d.rect:
                x, y, w, h = d.rect
                out.append(f'<line class="pitch-mark" x1="{x}" y1="{y + h / 2}" '
                           f'x2="{x + w}" y2="{y + h / 2}"/>'
                           f'<circle class="pitch-mark" cx="{x + w / 2}" cy="{y + h / 2}" '
                           f'r="{w / 7:.0f}"/>')
    order = {k: i for i, k in enumerate(DRAW_ORDER)}
    for zid, s in sorted(gm.zones.items(), key=lambda kv: order.get(kv[1].kind, 0)):
        name = gm.ground.label(zid)
        out.append(f'<g class="zone z-{escape(s.kind)}" data-zone="{escape(zid)}" tabindex="0">'
                   f"<title>{escape(name)}</title>"
                   + _outline(s, 'class="shape"') + "</g>")
    stands = [s for s in gm.zones.values() if s.kind == "stand"]
    for zid, s in gm.zones.items():  # names on top of every shape
        if s.kind in ("stand", "segregation", "perimeter", "concourse", "walkway") \
                or any(s.inside(st) for st in stands):
            continue
        x, y = s.centre()
        if s.kind == "gate":
            place = f'x="{x}" y="{y + 8}"'
        elif s.rect and s.rect[3] > s.rect[2]:  # a tall, narrow shape: write along it
            place = f'x="{x}" y="{y + 7}" transform="rotate(-90 {x} {y})"'
        else:
            place = f'x="{x}" y="{y + (30 if s.kind != "outside" else 8)}"'
            label_w = len(map_name(gm, zid)) * LABEL_EM * LABEL_PX
            if s.rect and label_w > s.rect[2] - 8:  # squeeze a long name into its shape
                place += f' textLength="{s.rect[2] - 8}" lengthAdjust="spacingAndGlyphs"'
        out.append(f'<text class="zone-label k-{escape(s.kind)}" {place}>'
                   f"{escape(map_name(gm, zid))}</text>")
    for zid, s in gm.zones.items():
        if s.kind == "stand":
            x, y = s.centre()
            tall = s.rect and s.rect[3] > s.rect[2]
            rot = f' transform="rotate(-90 {x} {y})"' if tall else ""
            out.append(f'<text class="stand-label" x="{x}" y="{y + 12}"{rot}>'
                       f"{escape(map_name(gm, zid))}</text>")
    out.append(f'<g id="pins">{pins}</g></svg>')
    return "".join(out)


def spread(points: list[tuple[float, float]], gap: float, rounds: int = 12,
           reach: list[float] | None = None) -> list[tuple[float, float]]:
    """Points pushed apart until no two are nearer than `gap` (or, given each point's
    `reach`, than the sum of theirs), a few rounds of relaxation, each kept as near its own
    place as the others allow: pins that would overlap stay readable. control.js's spread()
    does the same on the live screen."""
    pts = [list(p) for p in points]
    for _ in range(rounds):
        moved = False
        for a in range(len(pts)):
            for b in range(a + 1, len(pts)):
                p, q = pts[a], pts[b]
                dx, dy = q[0] - p[0], q[1] - p[1]
                d = math.hypot(dx, dy)
                if reach is not None:
                    gap = reach[a] + reach[b]
                if d >= gap:
                    continue
                if d < 0.01:  # the same spot: side by side
                    dx, dy, d = 1.0, 0.0, 1.0
                push = (gap - d) / 2
                p[0] -= dx / d * push
                p[1] -= dy / d * push
                q[0] += dx / d * push
                q[1] += dy / d * push
                moved = True
        if not moved:
            break
    return [(p[0], p[1]) for p in pts]


def pin_svg(zid: str, label: str, at: tuple[float, float], worst: int, cls: str,
            n: int) -> str:
    """One pin: its shape (S5 octagon, S4 diamond, else a circle) and number say the worst
    severity without colour; the small badge is the count. control.js's pin() draws the same."""
    x, y, r = at[0], at[1], PIN_R
    colour = SEVERITY_COLOURS[worst]
    if worst >= 5:
        pts = " ".join(f"{x + r * 1.08 * math.cos(math.pi / 8 + k * math.pi / 4):.1f},"
                       f"{y + r * 1.08 * math.sin(math.pi / 8 + k * math.pi / 4):.1f}"
                       for k in range(8))
        shape = f'<polygon points="{pts}" fill="{colour}"/>'
    elif worst == 4:
        shape = (f'<rect x="{x - r}" y="{y - r}" width="{2 * r}" height="{2 * r}" rx="4" '
                 f'transform="rotate(45 {x} {y})" fill="{colour}"/>')
    else:
        shape = f'<circle cx="{x}" cy="{y}" r="{r}" fill="{colour}"/>'
    # hidden from assistive technology: the zone under it is the keyboard's button
    return (f'<g class="pin sev{worst}{cls}" data-zone="{escape(zid)}" aria-hidden="true">'
            f'<title>{escape(label)}: {counted(n, "incident")}, worst S{worst}'
            f'</title>{shape}<text class="sevn" x="{x}" y="{y + 9}">{worst}</text>'
            f'<g class="count"><circle cx="{x + 26}" cy="{y - 24}" r="15"/>'
            f'<text x="{x + 26}" y="{y - 17}">{n}</text></g></g>')


def pin_layer(gm: GroundMap, incidents: list[dict[str, Any]], open_only: bool = True) -> str:
    """One pin per zone with incidents tonight: the count, coloured by the worst open
    severity (faded when all are closed), pulsing while any is unacknowledged. The page's
    script draws the same pins live."""
    by_zone: dict[str, list[dict[str, Any]]] = {}
    for inc in incidents:
        if open_only and inc.get("closed"):
            continue
        by_zone.setdefault(inc["location"], []).append(inc)
    pins = []
    for zid, incs in sorted(by_zone.items()):
        at = gm.pin(zid)
        if at is None:
            continue
        live = [i for i in incs if not i.get("closed")] or incs
        worst = max(int(i["severity"]) for i in live)
        cls = " pulse" if any(i["status"] == "reported" for i in incs) else ""
        cls += "" if any(not i.get("closed") for i in incs) else " closed"
        pins.append((zid, at, worst, cls, len(incs)))
    # pushed apart as the live map's are: no pin hides under another (a diamond's corners
    # reach furthest)
    at = spread([p[1] for p in pins], 0, reach=[(38 if p[2] >= 4 else 28) + 2 for p in pins])
    return "".join(pin_svg(zid, gm.ground.label(zid), (round(x), round(y)), worst, cls, n)
                   for (zid, _, worst, cls, n), (x, y) in zip(pins, at, strict=True))
