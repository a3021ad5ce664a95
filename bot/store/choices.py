"""Which fixture a person or a chat works on (`/fixture use`), kept in Redis so every replica
sees the same choice at once; the deployment default (`{ops}:active`) is the fallback."""

from __future__ import annotations

from bot.store.base import KeySpace, note_write, ops_prefix
from bot.store.gateway import Gateway

# A choice lasts one matchday: the next day people start again from the deployment default.
CHOICE_TTL = 36 * 3600


def person_choice(who: str, space: KeySpace) -> str:
    """The key of a person's fixture choice."""
    return f"{ops_prefix(space)}use:person:{who}"


def chat_choice(platform: str, chat: str, space: KeySpace) -> str:
    """The key of a chat's fixture choice."""
    return f"{ops_prefix(space)}use:chat:{platform}:{chat}"


class Choices:
    """Fixture choices of people and chats, over the gateway."""

    def __init__(self, gateway: Gateway) -> None:
        self.gateway = gateway
        self.space = gateway.space  # whose keys (see Gateway.for_club)

    async def fixture_choice(self, who: str, platform: str, chat: str) -> tuple[str | None,
                                                                               str | None]:
        """(the chat's fixture, the person's fixture), None where none is chosen."""
        chat_fx, person_fx = await self.gateway.call(
            lambda r: r.mget(chat_choice(platform, chat, self.space),
                           person_choice(who, self.space)))
        return chat_fx, person_fx

    async def elsewhere(self, people: list[str], fx_id: str) -> set[str]:
        """Who of `people` (platform:user) has chosen a fixture other than `fx_id` (one round
        trip: every person's choice is in the one {ops} slot)."""
        if not people:
            return set()
        got = await self.gateway.call(
            lambda r: r.mget([person_choice(who, self.space) for who in people]))
        return {who for who, fx in zip(people, got, strict=True) if fx and fx != fx_id}

    async def choose_fixture(self, fx_id: str, *, who: str = "", platform: str = "",
                             chat: str = "") -> None:
        """Set the fixture of a person (`who`) or of a chat (`platform`, `chat`)."""
        note_write()
        space = self.space
        key = person_choice(who, space) if who else chat_choice(platform, chat, space)
        await self.gateway.call(lambda r: r.set(key, fx_id, ex=CHOICE_TTL))

    async def active_fixture_id(self) -> str | None:
        """The deployment default: the fixture commands apply to when nobody chose one."""
        return await self.gateway.call(lambda r: r.get(ops_prefix(self.space) + "active"))

    async def set_active_fixture(self, fx_id: str) -> None:
        """Make a fixture the deployment default."""
        note_write()
        await self.gateway.call(lambda r: r.set(ops_prefix(self.space) + "active", fx_id))
