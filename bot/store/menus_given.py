"""Which command menu each person was last given by one Telegram bot: a start-up sets only
the menus that changed (a 15,000-steward roster is not 15,000 setMyCommands each start)."""

from __future__ import annotations

from bot.store.base import bot_prefix
from bot.store.gateway import Gateway


class MenusGiven:
    """Person -> the digest of the menu they were given, one hash per bot."""

    def __init__(self, gateway: Gateway, bot_id: str) -> None:
        self.gateway = gateway
        self.space = gateway.space  # whose keys (see Gateway.for_club)
        self.key = bot_prefix("telegram", bot_id, self.space) + "menus"

    async def stale(self, wanted: dict[str, str]) -> list[str]:
        """Of person -> menu digest, those not given that menu yet (one round trip)."""
        if not wanted:
            return []
        people = list(wanted)
        given = await self.gateway.call(lambda r: r.hmget(self.key, people))
        return [p for p, had in zip(people, given, strict=True) if had != wanted[p]]

    async def given(self, person: str, digest: str) -> None:
        """Telegram took this person's menu."""
        await self.gateway.call(lambda r: r.hset(self.key, person, digest))
