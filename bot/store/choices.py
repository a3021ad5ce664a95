"""Which fixture a person or a chat works on (`/fixture use`), kept in Redis so every replica
sees the same choice at once; the deployment default (`{ops}:active`) is the fallback."""

from __future__ import annotations

from bot.store.base import OPS, StoreBase, note_write

USE = OPS + "use:"  # use:person:<platform>:<user>, use:chat:<platform>:<chat> -> fixture id
# A choice lasts one matchday: the next day people start again from the deployment default.
CHOICE_TTL = 36 * 3600


def _person(who: str) -> str:
    return f"{USE}person:{who}"


def _chat(platform: str, chat: str) -> str:
    return f"{USE}chat:{platform}:{chat}"


class Choices(StoreBase):
    """Per-person and per-chat fixture choices (all under the `{ops}` tag: one MGET)."""

    async def fixture_choice(self, who: str, platform: str, chat: str) -> tuple[str | None,
                                                                               str | None]:
        """(the chat's fixture, the person's fixture), None where none is chosen."""
        chat_fx, person_fx = await self._call(self.r.mget(_chat(platform, chat), _person(who)))
        return chat_fx, person_fx

    async def choose_fixture(self, fx_id: str, *, who: str = "", platform: str = "",
                             chat: str = "") -> None:
        """Set the fixture of a person (`who`) or of a chat (`platform`, `chat`)."""
        note_write()
        key = _person(who) if who else _chat(platform, chat)
        await self._call(self.r.set(key, fx_id, ex=CHOICE_TTL))
