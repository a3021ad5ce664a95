"""Who gets a message: audience -> platform -> chats (channels.toml), a fixture's own chats
where several fixtures run at once (bot.delivery.scopes), and which roles read them."""

from __future__ import annotations

import tomllib
from collections.abc import Awaitable, Callable
from pathlib import Path

from bot.delivery.scopes import Scopes, audience_readers
from bot.domain.fixture.fixture_model import Fixture

READERS = "readers"
Channels = dict[str, dict[str, list[str]]]  # audience -> platform -> chat ids


def load_channels(path: Path) -> Channels:
    """audience -> platform -> chat ids, from channels.toml."""
    if not path.exists():
        return {}
    data = tomllib.loads(path.read_text())
    return {aud: {plat: [str(c) for c in chats] for plat, chats in plats.items()
                  if plat != READERS}
            for aud, plats in data.get("audiences", {}).items()}


def load_readers(path: Path) -> dict[str, frozenset[str]]:
    """audience -> the roles of the people in its chats (`readers = [...]` in channels.toml)."""
    if not path.exists():
        return {}
    data = tomllib.loads(path.read_text())
    return audience_readers(data.get("audiences", {}), path.name)


class Routes:
    """The chats of each audience, for each fixture's messages."""

    def __init__(self, channels: Channels, readers: dict[str, frozenset[str]] | None = None,
                 scopes: Scopes | None = None) -> None:
        self.channels = channels
        self.readers = readers or {}  # audience -> roles reading it (who may see what)
        # per-ground / per-fixture audiences (several fixtures at once)
        self.scopes = scopes or Scopes()

    def readers_of(self, audience: str, fixture: str = "") -> frozenset[str] | None:
        """Every role that reads an audience's chats (for one fixture's messages), counting
        other audiences sharing a chat; None when some audience involved does not declare
        its readers."""
        channels = self.scopes.channels(self.channels, fixture)
        readers = self.scopes.readers_for(self.readers, fixture)
        chats = {(p, c) for p, cs in channels.get(audience, {}).items() for c in cs}
        roles: set[str] = set(readers.get(audience, ()))
        if audience not in readers:
            return None
        for other, plats in channels.items():
            if any((p, c) in chats for p, cs in plats.items() for c in cs):
                if other not in readers:
                    return None
                roles |= readers[other]
        return frozenset(roles)

    async def learn_grounds(self, fixtures: list[str],
                            fixture: Callable[[str], Awaitable[Fixture | None]]) -> None:
        """Know the ground of each fixture whose messages may go to per-ground chats."""
        for fx in {f for f in fixtures if self.scopes.needs_ground(f)}:
            got = await fixture(fx)
            if got is not None:
                self.scopes.ground_of[fx] = got.ground

    def targets(self, audience: str, fixture: str = "") -> dict[str, list[str]]:
        """platform -> chats for an audience ('user:<platform>:<id>' is one person or chat);
        with a fixture, that fixture's chats (see bot/delivery/scopes.py)."""
        channels = self.scopes.channels(self.channels, fixture)
        if audience.startswith("user:"):
            _, platform, user = audience.split(":", 2)
            return {platform: [user]}
        if "," in audience:  # one message for several audiences: each chat once
            out: dict[str, list[str]] = {}
            for part in audience.split(","):
                for platform, chats in channels.get(part, {}).items():
                    have = out.setdefault(platform, [])
                    have += [c for c in chats if c not in have]
            return out
        return channels.get(audience, {})
