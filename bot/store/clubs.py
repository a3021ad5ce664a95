"""The clubs one deployment serves: a hash per club, the set of their ids and an append-only
audit stream of every change, all under the deployment's hash tag (one Cluster slot). A club
is added once and then enabled or disabled, never deleted."""

from __future__ import annotations

from bot.domain.club_record import Club
from bot.domain.outcomes import Reason
from bot.store.base import CLUB_AUDIT, CLUB_IDS, Refused, club_key, deployment_prefix, guard
from bot.store.gateway import Gateway
from bot.store.ops import Hset, Op, RequireExists, RequireMissing, Sadd, Xadd


class ClubRegistry:
    """The deployment's clubs and their audit trail, over the gateway."""

    def __init__(self, gateway: Gateway) -> None:
        self.gateway = gateway

    async def add(self, club: Club, who: str, at: str, unix_user: str = "") -> Reason | None:
        """Register a new club atomically; Reason.CLUB_EXISTS (nothing written) if its id
        is taken."""
        ops: list[Op] = [
            RequireMissing(club_key(club.club_id), guard(Reason.CLUB_EXISTS, club.club_id)),
            Hset(club_key(club.club_id), {**club.to_fields(), "added_at": at,
                                          "added_by": who}),
            Sadd(CLUB_IDS, club.club_id),
            Xadd(CLUB_AUDIT, _entry(who, at, unix_user, "club.add", club.club_id,
                               _described(club))),
        ]
        return await self._apply(ops)

    async def set_enabled(self, club_id: str, enabled: bool, who: str, at: str,
                          unix_user: str = "") -> Reason | None:
        """Enable or disable a club atomically, with its audit entry; Reason.NO_CLUB if no
        such club."""
        action = "club.enable" if enabled else "club.disable"
        ops: list[Op] = [
            RequireExists(club_key(club_id), guard(Reason.NO_CLUB, club_id)),
            Hset(club_key(club_id), {"enabled": "1" if enabled else "0"}),
            Xadd(CLUB_AUDIT, _entry(who, at, unix_user, action, club_id,
                               "enabled" if enabled else "disabled")),
        ]
        return await self._apply(ops)

    async def get(self, club_id: str) -> Club | None:
        """One club, or None."""
        fields = await self.gateway.call(
            lambda r: r.hgetall(deployment_prefix() + club_key(club_id)))
        return Club.from_fields(fields) if fields else None

    async def clubs(self) -> list[Club]:
        """Every club ever added (enabled or not), by id."""
        ids = sorted(await self.gateway.call(lambda r: r.smembers(deployment_prefix() + CLUB_IDS)))
        if not ids:
            return []
        pipe = self.gateway.pipeline()
        for club_id in ids:
            pipe.hgetall(deployment_prefix() + club_key(club_id))
        rows = await self.gateway.call(pipe.execute())
        return [Club.from_fields(row) for row in rows if row]

    async def history(self, club_id: str | None = None) -> list[dict[str, str]]:
        """The registry's audit entries, oldest first; with `club_id`, that club's only."""
        rows = await self.gateway.call(lambda r: r.xrange(deployment_prefix() + CLUB_AUDIT))
        entries = [dict(f) for _, f in rows]
        return [e for e in entries if club_id is None or e.get("club") == club_id]

    async def _apply(self, ops: list[Op]) -> Reason | None:
        try:
            await self.gateway.apply(deployment_prefix(), ops)
        except Refused as refused:
            return refused.reason
        return None


def _entry(who: str, at: str, unix_user: str, action: str, club_id: str,
           detail: str) -> dict[str, str]:
    """One audit entry: who, when, what (never a secret: references only)."""
    entry = {"at": at, "who": who, "action": action, "club": club_id, "detail": detail}
    if unix_user:
        entry["unix_user"] = unix_user
    return entry


def _described(club: Club) -> str:
    """What an added club is, for its audit entry: names and references, no secret."""
    refs = " ".join(f"{f}={r}" for f, r in club.secrets().items())
    return (f"name={club.name!r} enabled={int(club.enabled)} grounds="
            f"{','.join(club.grounds) or '-'} retention_days={club.retention_days} {refs}")
