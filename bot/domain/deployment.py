"""The stewarding plan: posts per zone of a ground (from the ground's config), the club's
rota filling them, and planned vs filled per zone. Stewards are known by the rota's steward
id (tabard number) and the name the club uses; nothing else about them is kept."""

from __future__ import annotations

import csv
import io
import re
import tomllib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from bot.domain.briefing.briefing_cadence import Offset, parse_offset
from bot.domain.fixture.fixture_model import Fixture
from bot.domain.messages import Button
from bot.domain.plurals import counted
from bot.domain.procedures import STEWARD_ROLES, Steward, in_zone
from bot.domain.vocab import match_key

POST_KINDS = ("static", "mobile", "fire", "specialist")
PER_MOBILE = 250  # expected attendance per mobile steward (SGSA guidance, typical figure)
MAX_ROWS = 2000  # a rota import is at most this many lines
STEWARD_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,19}$")
DEFAULT_ROLLCALL = "T-90m"  # the automatic roll call, unless the ground or fixture says
ROLLCALL_TEXT = "Roll call: tap your post when you are on it (or /onpost <post>)."


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


MAX_COUNT = 200  # one [[post]] table stands for at most this many posts (`count`)


def _expand(tables: list[dict[str, Any]], where: str) -> list[Post]:
    """Posts of `[[post]]` tables, in order; a table's `count = n` stands for n posts of that
    kind (the first keeps the id and name, then `<id>_2`, "<name> (2)", ...)."""
    out: list[Post] = []
    for p in tables:
        pid, zone = p.get("id"), p.get("zone")
        if not isinstance(pid, str) or not pid or not isinstance(zone, str) or not zone:
            raise ValueError(f"{where}: post {pid!r} needs an id and a zone")
        kind = p.get("kind", "static")
        if kind not in POST_KINDS:
            raise ValueError(f"{where}: post {pid!r} has kind {kind!r}; "
                             f"use one of {', '.join(POST_KINDS)}")
        count = p.get("count", 1)
        if not isinstance(count, int) or isinstance(count, bool) or not 1 <= count <= MAX_COUNT:
            raise ValueError(f"{where}: post {pid!r} has count {count!r}; use a whole number "
                             f"from 1 to {MAX_COUNT} (`drop` removes a post)")
        name, qualified = str(p.get("name", pid)), bool(p.get("qualification", False))
        out += [Post(pid if i == 1 else f"{pid}_{i}", zone,
                     name if i == 1 else f"{name} ({i})", kind, qualified)
                for i in range(1, count + 1)]
    seen: set[str] = set()
    for post in out:
        if post.id in seen:
            raise ValueError(f"{where}: post {post.id!r} is named twice")
        seen.add(post.id)
    return out


def load_posts(path: Path) -> list[Post]:
    """The `[[post]]` tables of a ground's config file (none: no plan yet)."""
    return _expand(tomllib.loads(path.read_text()).get("post", []), path.name)


def fixture_posts_of(data: dict[str, Any], where: str) -> dict[str, list[Post]]:
    """Each fixture's posts where a ground's file overrides them (`[fixtures."<id>"]`:
    `drop = [post ids]`, and `[[fixtures."<id>".post]]` tables that change the ground's post
    of the same id, only the fields given, or add a new one)."""
    base = [dict(t) for t in data.get("post", []) if isinstance(t, dict)]
    ids = {t.get("id") for t in base}
    out: dict[str, list[Post]] = {}
    for fx, section in data.get("fixtures", {}).items():
        here = f"{where} fixtures.{fx}"
        if not isinstance(section, dict):
            raise ValueError(f"{here}: must be a table (drop = [...], [[...post]])")
        drop = section.get("drop", [])
        if not isinstance(drop, list) or not all(isinstance(d, str) for d in drop):
            raise ValueError(f"{here}: drop is a list of post ids")
        unknown = [d for d in drop if d not in ids]
        if unknown:
            raise ValueError(f"{here}: drop names no post of this ground: {', '.join(unknown)}")
        tables = [t for t in base if t.get("id") not in drop]
        for o in section.get("post", []):
            at = next((i for i, t in enumerate(tables) if t.get("id") == o.get("id")), None)
            if at is None:
                tables.append(dict(o))
            else:
                tables[at] = {**tables[at], **o}
        out[str(fx)] = _expand(tables, here)
    return out


@dataclass(frozen=True)
class GroundPlan:
    """A ground's stewarding plan from its config file: its posts, each fixture's own where
    the file overrides them, and when the automatic roll call goes out (an offset before
    kick-off, None: no automatic roll call)."""

    ground: str
    posts: list[Post]
    rollcall: Offset | None
    fixtures: dict[str, list[Post]] = field(default_factory=dict)

    def posts_for(self, fixture: str) -> list[Post]:
        """A fixture's posts: its override's, else the ground's."""
        return self.fixtures.get(fixture, self.posts)


_cache: dict[Path, tuple[float, GroundPlan]] = {}


def plan_of(config_dir: Path, ground: str) -> GroundPlan:
    """The stewarding plan of a ground (by id) from its file under config/grounds (re-read
    only when the file changes); no posts and no roll call when no file names it."""
    for path in sorted((config_dir / "grounds").glob("*.toml")):
        mtime = path.stat().st_mtime
        hit = _cache.get(path)
        if hit is None or hit[0] != mtime:
            data = tomllib.loads(path.read_text())
            hit = _cache[path] = (mtime, GroundPlan(
                str(data.get("id", "")), load_posts(path), rollcall_offset(data.get("rollcall")),
                fixture_posts_of(data, path.name)))
        if hit[1].ground == ground:
            return hit[1]
    return GroundPlan(ground, [], None)


def posts_of(config_dir: Path, ground: str, fixture: str = "") -> list[Post]:
    """The posts of a ground (by id) from its file under config/grounds; with `fixture`, that
    fixture's (the ground's with the fixture's overrides)."""
    return plan_of(config_dir, ground).posts_for(fixture)


def rollcall_offset(value: object) -> Offset | None:
    """A ground's or fixture's roll-call time: "T-90m" (the default when unset), "off"
    (none); ValueError on anything else."""
    if value is None or value == "":
        return parse_offset(DEFAULT_ROLLCALL)
    if str(value).strip().lower() in ("off", "none", "no"):
        return None
    return parse_offset(str(value))


def post_buttons(posts: list[Post], shown: int = 6) -> Callable[[Steward], list[list[Button]]]:
    """A roll call's buttons for each steward: the posts of their zone, one tap each."""
    def for_steward(s: Steward) -> list[list[Button]]:
        return zone_post_buttons(posts, s.zone, shown)
    return for_steward


def zone_post_buttons(posts: list[Post], zone: str, shown: int = 6) -> list[list[Button]]:
    """One "On post" button per post of a zone (or of the zones inside it), a row each."""
    mine = [p for p in posts if in_zone(p.zone, zone) or in_zone(zone, p.zone)]
    return [[Button(f"On post: {p.name} ✓", f"/onpost {p.id}", "primary")]
            for p in mine[:shown]]


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
        sid, name, typed = cells
        post = match_key(typed, posts) or typed
        if not STEWARD_ID.match(sid):
            problems.append(f"line {n}: steward id {sid[:20]!r} is not a tabard number or id")
        elif post not in posts:
            problems.append(f"line {n}: no post {typed[:40]!r} at this ground")
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
        return f"{self.filled}/{counted(self.planned, 'post')}"


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


def rollcall_due(fx: Fixture, plan: GroundPlan, tz: ZoneInfo) -> tuple[str, datetime] | None:
    """(label, due) of a fixture's automatic roll call: its own note, else its ground's
    (default T-90m); None when off, cancelled, the fixture has no posts, or the note is bad."""
    if fx.status == "cancelled" or not plan.posts_for(fx.id):
        return None
    try:
        offset = rollcall_offset(fx.notes["rollcall"]) if fx.notes.get("rollcall") \
            else plan.rollcall
    except ValueError:
        return None
    return (offset.label, offset.due(fx.kickoff, tz)) if offset else None


@dataclass(frozen=True)
class DutyRecord:
    """One steward's duty at a fixture, as the club's record of who worked where: the post,
    the first and latest check-in, the stand-down, the last position they shared (times ISO,
    '' when none; no personal data beyond the rota's)."""

    who: str
    post: str = ""
    checked_in: str = ""
    last_in: str = ""
    stood_down: str = ""
    lat: float | None = None
    lon: float | None = None
    position_at: str = ""

    @classmethod
    def of(cls, who: str, h: dict[str, str]) -> DutyRecord:
        """From the store's fields."""
        return cls(who, h.get("post", ""), h.get("in", ""), h.get("last", ""),
                   h.get("out", ""), float(h["lat"]) if h.get("lat") else None,
                   float(h["lon"]) if h.get("lon") else None, h.get("pos_at", ""))

    @property
    def on_duty(self) -> bool:
        """Checked in and not stood down since."""
        return bool(self.last_in) and self.stood_down < self.last_in


def tonight(roster: Iterable[Steward], filled: dict[str, tuple[str, str]],
            links: dict[str, str], posts: list[Post]) -> list[Steward]:
    """Everyone who stewards tonight: the roster's stewards, and every account linked to a
    tabard on the fixture's rota, known by the rota's name and posted in its post's zone."""
    out = {s.who: s for s in roster}
    for who, (_, name, post) in on_rota(filled, links, posts).items():
        old = out.get(who)
        role = old.role if old is not None and old.role in STEWARD_ROLES else "steward"
        out[who] = Steward(who, name, role, post.zone)
    return list(out.values())
