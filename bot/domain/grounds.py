"""Ground layouts (stands, blocks, gates, walkways, outside zones) and location lookup."""

from __future__ import annotations

import difflib
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from bot.domain.ingress_plan import IngressPlan, parse_plan
from bot.domain.vocab import norm


@dataclass(frozen=True)
class Zone:
    """One place in a ground that people can name."""

    id: str
    name: str
    kind: str
    aliases: tuple[str, ...] = ()
    adjacent: tuple[str, ...] = ()
    short: str = ""  # for tight spaces (status lines, buttons); the name when empty
    blocks: tuple[tuple[int, int], ...] = ()  # block number ranges, inclusive


BLOCK = re.compile(r"(?:blocks?|blk|b)?_?(\d{1,4})")
SUGGEST_MAX = 60  # longer words get no "did you mean" (difflib is quadratic in length)


@dataclass
class Ground:
    """A ground's layout with every zone's aliases folded for lookup."""

    id: str
    name: str
    zones: dict[str, Zone]
    _index: dict[str, str] = field(default_factory=dict, repr=False)
    _nearby: dict[str, list[str]] = field(default_factory=dict, repr=False)
    max_words: int = 1  # words in the longest id, name or alias (bounds free-text search)
    ingress: IngressPlan | None = None  # turnstiles, entry points, capacities (issue 35)

    def __post_init__(self) -> None:
        for z in self.zones.values():
            self._index[norm(z.id)] = z.id
            self._index[norm(z.name)] = z.id
            for a in z.aliases:
                self._index.setdefault(norm(a), z.id)
        self.max_words = max((len(k.split("_")) for k in self._index), default=1)

    def resolve(self, word: str) -> str | None:
        """The zone id a word names (id, name, alias, or a block number in a declared
        range), or None."""
        w = norm(word)
        hit = self._index.get(w)
        if hit is not None:
            return hit
        n = self.block_number(word)
        return self.zone_of_block(n) if n is not None else None

    def leading(self, words: list[str]) -> tuple[str, int] | None:
        """(zone id, words used) of the longest run of leading words that names a zone (id,
        name, alias or block), or None; bounded by the longest name, so linear in the text."""
        for size in range(min(len(words), self.max_words), 0, -1):
            zone = self.resolve(" ".join(words[:size]))
            if zone is not None:
                return zone, size
        return None

    def names(self) -> str:
        """Every zone by a name that resolves to it (its first alias, else its name), for a
        refusal that lists the valid ones."""
        return ", ".join(z.aliases[0] if z.aliases else z.name for z in self.zones.values())

    @staticmethod
    def block_number(word: str) -> int | None:
        """112 for 'block 112', 'b112' or '112'; None when the word is not a block."""
        m = BLOCK.fullmatch(norm(word)) if len(word) <= 12 else None
        return int(m.group(1)) if m else None

    def zone_of_block(self, n: int) -> str | None:
        """The zone whose declared block ranges hold block n, or None."""
        for z in self.zones.values():
            if any(lo <= n <= hi for lo, hi in z.blocks):
                return z.id
        return None

    def block_ranges(self) -> str:
        """'101-112, 113-125, …': every declared block range, for error messages."""
        ranges = sorted(r for z in self.zones.values() for r in z.blocks)
        return ", ".join(f"{lo}-{hi}" for lo, hi in ranges)

    def suggest(self, word: str) -> list[str]:
        """Zone ids close to a mistyped location."""
        if len(word) > SUGGEST_MAX:
            return []
        out: list[str] = []
        for m in difflib.get_close_matches(norm(word), list(self._index), n=6, cutoff=0.55):
            if self._index[m] not in out:
                out.append(self._index[m])
        return out[:3]

    def search(self, text: str, limit: int = 6) -> list[str]:
        """The zone the text names exactly, else zones whose id, name or alias contains the
        typed text, then fuzzy matches."""
        exact = self.resolve(text)
        if exact is not None:
            return [exact]
        w = norm(text)
        hits: list[str] = []
        for key, zid in self._index.items():
            if w and w in key and zid not in hits:
                hits.append(zid)
        for zid in self.suggest(text):
            if zid not in hits:
                hits.append(zid)
        return hits[:limit]

    def label(self, zone_id: str) -> str:
        """A zone's display name."""
        z = self.zones.get(zone_id)
        return z.name if z else zone_id

    def short_label(self, zone_id: str, width: int = 0) -> str:
        """A zone's name where it fits in `width` characters, else its short name (never a
        name cut mid-word)."""
        z = self.zones.get(zone_id)
        if z is None:
            return zone_id
        if width and len(z.name) <= width:
            return z.name
        return z.short or z.name

    def nearby(self, zone_id: str) -> list[str]:
        """The zone and every zone adjacent to it (either way), computed once per zone."""
        if zone_id not in self._nearby:
            self._nearby[zone_id] = [z for z in self.zones if self.near(z, zone_id)] or [zone_id]
        return self._nearby[zone_id]

    def near(self, a: str, b: str) -> bool:
        """Same zone or adjacent in the layout."""
        if a == b:
            return True
        za, zb = self.zones.get(a), self.zones.get(b)
        return bool((za and b in za.adjacent) or (zb and a in zb.adjacent))


def load_ground(path: Path) -> Ground:
    """Read one ground layout TOML file."""
    data = tomllib.loads(path.read_text())
    zones = {
        z["id"]: Zone(
            id=z["id"],
            name=z["name"],
            kind=z.get("kind", "zone"),
            aliases=tuple(z.get("aliases", ())),
            adjacent=tuple(z.get("adjacent", ())),
            short=z.get("short", ""),
            blocks=tuple(_block_range(r, path) for r in z.get("blocks", ())),
        )
        for z in data.get("zone", [])
    }
    return Ground(id=data["id"], name=data["name"], zones=zones,
                  ingress=parse_plan(data, set(zones), path.name))


def _block_range(text: str, path: Path) -> tuple[int, int]:
    m = re.fullmatch(r"\s*(\d{1,4})\s*-\s*(\d{1,4})\s*", str(text))
    if not m or int(m.group(1)) > int(m.group(2)):
        raise ValueError(f"{path.name}: block range {text!r} must look like '101-112'")
    return int(m.group(1)), int(m.group(2))


def load_grounds(config_dir: Path) -> dict[str, Ground]:
    """Every ground layout under config/grounds, by id."""
    grounds = {}
    for path in sorted((config_dir / "grounds").glob("*.toml")):
        g = load_ground(path)
        grounds[g.id] = g
    return grounds
