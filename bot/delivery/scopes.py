"""Audiences of one fixture when several run at once: `channels.toml` may name, per ground
(`[grounds.<ground>.audiences.<audience>]`) or per fixture
(`[fixtures."<fixture id>".audiences.<audience>]`), the chats an audience has for that
ground's or that fixture's messages. The fixture's own section wins, then its ground's, then
the top-level `[audiences.*]` (which is all a one-fixture deployment needs)."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from bot.domain.vocab import ROLES

Channels = dict[str, dict[str, list[str]]]  # audience -> platform -> chat ids
READERS = "readers"


def _channels(audiences: dict) -> Channels:
    return {aud: {plat: [str(c) for c in chats] for plat, chats in plats.items()
                  if plat != READERS}
            for aud, plats in audiences.items()}


def audience_readers(audiences: dict, where: str) -> dict[str, frozenset[str]]:
    """audience -> roles of its `readers`; an unknown role is a ValueError naming `where`."""
    out = {}
    for aud, row in audiences.items():
        if READERS in row:
            unknown = [r for r in row[READERS] if r not in ROLES.keys()]
            if unknown:
                raise ValueError(f"{where}: audience {aud!r} has unknown reader role "
                                 f"{unknown[0]!r} (roles: {', '.join(ROLES.keys())})")
            out[aud] = frozenset(row[READERS])
    return out


@dataclass
class Scopes:
    """Per-ground and per-fixture audiences, and the ground of each fixture seen so far."""

    grounds: dict[str, Channels] = field(default_factory=dict)
    fixtures: dict[str, Channels] = field(default_factory=dict)
    readers: dict[str, dict[str, frozenset[str]]] = field(default_factory=dict)  # scope key
    ground_of: dict[str, str] = field(default_factory=dict)  # fixture -> ground (immutable)

    def __bool__(self) -> bool:
        return bool(self.grounds or self.fixtures)

    def needs_ground(self, fixture: str) -> bool:
        """Is the fixture's ground needed to route its messages, and not known yet?"""
        return bool(fixture and self.grounds and fixture not in self.ground_of)

    def _keys(self, fixture: str) -> list[tuple[str, Channels]]:
        """The sections that apply to a fixture, most specific first."""
        out = []
        if fixture in self.fixtures:
            out.append(("fixture:" + fixture, self.fixtures[fixture]))
        ground = self.ground_of.get(fixture, "")
        if ground in self.grounds:
            out.append(("ground:" + ground, self.grounds[ground]))
        return out

    def channels(self, base: Channels, fixture: str) -> Channels:
        """The audiences of one fixture's messages: each audience from the most specific
        section that names it."""
        if not fixture or not self:
            return base
        merged = dict(base)
        for _key, section in reversed(self._keys(fixture)):
            merged.update(section)
        return merged

    def readers_for(self, base: dict[str, frozenset[str]],
                    fixture: str) -> dict[str, frozenset[str]]:
        """Who reads each audience's chats for one fixture (a section's audience without
        `readers` keeps the top-level one's)."""
        if not fixture or not self:
            return base
        merged = dict(base)
        for key, _section in reversed(self._keys(fixture)):
            merged.update(self.readers.get(key, {}))
        return merged


def load_scopes(path: Path) -> Scopes:
    """The `[grounds.*]` and `[fixtures.*]` sections of channels.toml (none: empty)."""
    if not path.exists():
        return Scopes()
    data = tomllib.loads(path.read_text())
    scopes = Scopes()
    for kind, into in (("grounds", scopes.grounds), ("fixtures", scopes.fixtures)):
        for name, section in data.get(kind, {}).items():
            audiences = section.get("audiences", {})
            into[name] = _channels(audiences)
            scopes.readers[f"{kind[:-1]}:{name}"] = audience_readers(
                audiences, f"{path.name} {kind}.{name}")
    return scopes
