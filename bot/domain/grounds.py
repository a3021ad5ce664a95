"""Ground layouts (stands, blocks, gates, walkways, outside zones) and location lookup."""

from __future__ import annotations

import difflib
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from bot.domain.vocab import norm


@dataclass(frozen=True)
class Zone:
    """One place in a ground that people can name."""

    id: str
    name: str
    kind: str
    aliases: tuple[str, ...] = ()
    adjacent: tuple[str, ...] = ()


@dataclass
class Ground:
    """A ground's layout with every zone's aliases folded for lookup."""

    id: str
    name: str
    zones: dict[str, Zone]
    _index: dict[str, str] = field(default_factory=dict, repr=False)
    _nearby: dict[str, list[str]] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        for z in self.zones.values():
            self._index[norm(z.id)] = z.id
            self._index[norm(z.name)] = z.id
            for a in z.aliases:
                self._index.setdefault(norm(a), z.id)

    def resolve(self, word: str) -> str | None:
        """The zone id a word names, or None."""
        return self._index.get(norm(word))

    def suggest(self, word: str) -> list[str]:
        """Zone ids close to a mistyped location."""
        out: list[str] = []
        for m in difflib.get_close_matches(norm(word), list(self._index), n=6, cutoff=0.55):
            if self._index[m] not in out:
                out.append(self._index[m])
        return out[:3]

    def search(self, text: str, limit: int = 6) -> list[str]:
        """Zones whose id, name or alias contains the typed text, then fuzzy matches."""
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
        )
        for z in data.get("zone", [])
    }
    return Ground(id=data["id"], name=data["name"], zones=zones)


def load_grounds(config_dir: Path) -> dict[str, Ground]:
    """Every ground layout under config/grounds, by id."""
    grounds = {}
    for path in sorted((config_dir / "grounds").glob("*.toml")):
        g = load_ground(path)
        grounds[g.id] = g
    return grounds
