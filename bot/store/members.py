"""Who joined by invite: one-time invite codes and the members they made, under `{ops}`."""

from __future__ import annotations

import json

from bot.domain.ledger import Var
from bot.domain.outcomes import Reason
from bot.store.base import Refused, guard, note_write, ops_prefix
from bot.store.gateway import Gateway
from bot.store.ops import Del, Hget, Hset, Op, RequireExists, json_value


class Members:
    """Invites and the members who redeemed them, over the gateway."""

    def __init__(self, gateway: Gateway) -> None:
        self.gateway = gateway
        self.space = gateway.space  # whose keys (see Gateway.for_club)

    async def member(self, who: str) -> dict[str, str] | None:
        """A member who joined by invite, or None."""
        raw = await self.gateway.call(lambda r: r.hget(ops_prefix(self.space) + "members", who))
        return json.loads(raw) if raw else None

    async def create_invite(self, code: str, role: str, by: str, ttl: int) -> None:
        """Store a one-time invite code for a role, expiring after ttl seconds."""
        note_write()
        pipe = self.gateway.pipeline(transaction=True)
        pipe.hset(ops_prefix(self.space) + f"invite:{code}", mapping={"role": role, "by": by})
        pipe.expire(ops_prefix(self.space) + f"invite:{code}", ttl)
        await self.gateway.call(pipe.execute())

    async def redeem_invite(self, code: str, who: str, name: str, at: str) -> str | None:
        """Use an invite once, atomically: the role it grants, or None if unknown/used/expired."""
        record = json_value({"role": Var("role"), "invited_by": Var("by"), "name": name,
                             "joined_at": at})
        ops: list[Op] = [
            RequireExists(f"invite:{code}", guard(Reason.UNKNOWN_INVITE)),
            Hget(f"invite:{code}", "role", "role"),
            Hget(f"invite:{code}", "by", "by"),
            Hset("members", {who: record}),
            Del(f"invite:{code}"),
        ]
        try:
            applied = await self.gateway.apply(ops_prefix(self.space), ops)
        except Refused:
            return None
        return applied.vars["role"]
