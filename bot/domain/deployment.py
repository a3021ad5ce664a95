"""The stewarding plan: posts per zone of a ground (from the ground's config), the club's
rota filling them, and planned vs filled per zone. Stewards are known by the rota's steward
id (tabard number) and the name the club uses; nothing else about them is kept."""

from __future__ import annotations

import csv
import io
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

POST_KINDS = ("static", "mobile", "fire", "specialist")
PER_MOBILE = 250  # expected attendance per mobile steward (SGSA guidance, typical figure)
MAX_ROWS = 2000  # a rota import is at most this many lines
STEWARD_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,19}$")


@dataclass(frozen=True)
class Post:
    """A place a steward is posted: its zone, kind, and whether it needs a qualification."""

    id: str
    zone: str
    name: str
    kind: str = "static"
    qualified: bool = False


@dataclass(frozen=True)
class RotaRow:
    """One line of the club's rota: steward id (tabard), name as the club uses it, post."""

    steward: str
    name: str
    post: str


def load_posts(path: Path) -> list[Post]:
    """The `[[post]]` tables of a ground's config file (none: no plan yet)."""
    data = tomllib.loads(path.read_text())
    out = []
    for p in data.get("post", []):
        kind = p.get("kind", "static")
        if kind not in POST_KINDS:
            raise ValueError(f"{path.name}: post {p.get('id')!r} has kind {kind!r}; "
                             f"use one of {', '.join(POST_KINDS)}")
        out.append(Post(p["id"], p["zone"], p.get("name", p["id"]), kind,
                        bool(p.get("qualification", False))))
    return out


_cache: dict[Path, tuple[float, str, list[Post]]] = {}


def posts_of(config_dir: Path, ground: str) -> list[Post]:
    """The posts of a ground (by id) from its file under config/grounds (re-read only when
    the file changes)."""
    for path in sorted((config_dir / "grounds").glob("*.toml")):
        mtime = path.stat().st_mtime
        hit = _cache.get(path)
        if hit is None or hit[0] != mtime:
            gid = str(tomllib.loads(path.read_text()).get("id", ""))
            hit = _cache[path] = (mtime, gid, load_posts(path))
        if hit[1] == ground:
            return hit[2]
    return []


def parse_rota(text: str, posts: dict[str, Post]) -> tuple[list[RotaRow], list[str]]:
    """Rows of a CSV rota (steward id, name, post; a header line is skipped) and one line
    per problem; any problem means nothing is imported."""
    rows: list[RotaRow] = []
    problems: list[str] = []
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if len(lines) > MAX_ROWS:
        return [], [f"{len(lines)} lines; a rota import takes at most {MAX_ROWS}."]
    seen: dict[str, int] = {}
    for n, rec in enumerate(csv.reader(io.StringIO("\n".join(lines))), start=1):
        cells = [c.strip() for c in rec]
        if n == 1 and cells and cells[0].lower() in ("steward", "id", "tabard", "steward id"):
            continue
        if len(cells) != 3:
            problems.append(f"line {n}: needs 3 fields (steward id, name, post), has "
                            f"{len(cells)}")
            continue
        sid, name, post = cells
        if not STEWARD_ID.match(sid):
            problems.append(f"line {n}: steward id {sid[:20]!r} is not a tabard number or id")
        elif post not in posts:
            problems.append(f"line {n}: no post {post[:40]!r} at this ground")
        elif post in seen:
            problems.append(f"line {n}: post {post} is already filled on line {seen[post]}")
        else:
            seen[post] = n
            rows.append(RotaRow(sid, name[:60], post))
    return rows, problems


@dataclass(frozen=True)
class ZoneFill:
    """Planned vs filled posts of one zone."""

    zone: str
    planned: int
    filled: int
    mobile_planned: int
    mobile_filled: int


def fill_by_zone(posts: list[Post], filled: dict[str, str]) -> list[ZoneFill]:
    """Planned and filled posts per zone, in the order the plan names zones."""
    order: list[str] = []
    for p in posts:
        if p.zone not in order:
            order.append(p.zone)
    out = []
    for z in order:
        mine = [p for p in posts if p.zone == z]
        mobile = [p for p in mine if p.kind == "mobile"]
        out.append(ZoneFill(z, len(mine), sum(1 for p in mine if p.id in filled),
                            len(mobile), sum(1 for p in mobile if p.id in filled)))
    return out


def mobile_needed(attendance: int) -> int:
    """Mobile stewards the expected attendance calls for (one per PER_MOBILE, rounded up)."""
    return -(-attendance // PER_MOBILE) if attendance > 0 else 0


def on_rota(filled: dict[str, tuple[str, str]], links: dict[str, str],
            posts: list[Post]) -> dict[str, tuple[str, str, Post]]:
    """Accounts linked to a tabard on the rota: who -> (tabard, rota name, their post)."""
    by_id = {p.id: p for p in posts}
    out: dict[str, tuple[str, str, Post]] = {}
    for post, (tabard, name) in sorted(filled.items()):
        who = links.get(tabard)
        if who and post in by_id:
            out[who] = (tabard, name, by_id[post])
    return out


@dataclass(frozen=True)
class ZoneState:
    """Planned vs filled posts of one zone of the map, and how bad a gap is: "red" where most
    posts are unfilled or a mobile post is empty while the ground is short of mobile
    stewards, "amber" where some posts are unfilled, else "ok"."""

    zone: str
    planned: int
    filled: int
    mobile_planned: int
    mobile_filled: int
    level: str
    unfilled: tuple[str, ...] = ()  # names of the unfilled posts, in plan order

    @property
    def label(self) -> str:
        """What the map and the Home tab print beside the zone ('3/5 posts')."""
        return f"{self.filled}/{self.planned} post{'s' if self.planned != 1 else ''}"


@dataclass(frozen=True)
class PlanState:
    """The plan for the screens: every zone's state, and the ground's mobile figures."""

    zones: tuple[ZoneState, ...]
    attendance: int
    mobile_needed: int
    mobile_planned: int
    mobile_filled: int

    @property
    def mobile_short(self) -> bool:
        """Fewer mobile stewards than the expected attendance calls for."""
        return self.mobile_filled < self.mobile_needed


def map_zone(post_zone: str, zones: set[str]) -> str:
    """The zone of the map a post's zone is drawn in: itself, else the closest enclosing
    one ('stb_upper' in 'stb'), else itself."""
    best = post_zone if post_zone in zones else ""
    if not best:
        for z in zones:
            if post_zone.startswith(z + "_") and len(z) > len(best):
                best = z
    return best or post_zone


def plan_state(posts: list[Post], filled: dict[str, tuple[str, str]], attendance: int,
               zones: set[str]) -> PlanState:
    """Planned vs filled per zone of the map (`zones`: the ids it draws), with the flags."""
    need = mobile_needed(attendance)
    mobile = [p for p in posts if p.kind == "mobile"]
    mobile_filled = sum(1 for p in mobile if p.id in filled)
    short = mobile_filled < need
    grouped: dict[str, list[Post]] = {}
    for p in posts:
        grouped.setdefault(map_zone(p.zone, zones), []).append(p)
    out = []
    for z, mine in grouped.items():
        empty = [p for p in mine if p.id not in filled]
        mob = [p for p in mine if p.kind == "mobile"]
        mob_empty = [p for p in mob if p.id not in filled]
        if 2 * len(empty) > len(mine) or (short and mob_empty):
            level = "red"
        elif empty:
            level = "amber"
        else:
            level = "ok"
        out.append(ZoneState(z, len(mine), len(mine) - len(empty), len(mob),
                             len(mob) - len(mob_empty), level, tuple(p.name for p in empty)))
    return PlanState(tuple(out), attendance, need, len(mobile), mobile_filled)
