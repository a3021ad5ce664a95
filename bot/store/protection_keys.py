"""Martyn's Law documents' keys (deployment-wide, per ground): the revisions as an
append-only stream (number, content hash, when, by whom), the current one's hash guarding the
next, when each revision was sent to the regulator, and the reminder's once-only claim; and
the times stewards acknowledged a drill's procedure."""

from __future__ import annotations

from dataclasses import dataclass

from bot.domain.ledger import Var
from bot.domain.outcomes import Reason
from bot.store.base import Refused, fx_prefix, guard, ops_prefix
from bot.store.gateway import Gateway
from bot.store.ops import Hset, Incr, Op, RequireIn, RequireMissing, Set, Xadd

CLAIM_TTL = 400 * 86400


@dataclass(frozen=True)
class Revision:
    """One revision of a ground's document."""

    n: int
    digest: str
    at: str
    by: str
    sent_at: str = ""  # when it was recorded as sent to the regulator ('' not yet)


class ProtectionRevisions:
    """Revisions of each ground's Martyn's Law document, and their reminders."""

    def __init__(self, gateway: Gateway) -> None:
        self.gateway = gateway
        self.space = gateway.space  # whose keys (see Gateway.for_club)
        self.prefix = ops_prefix(gateway.space) + "mlaw:"

    async def revisions(self, ground: str) -> list[Revision]:
        """Every revision of a ground's document, oldest first."""
        rows, sent = await self.gateway.call(lambda r: r.pipeline().xrange(
            f"{self.prefix}{ground}:revs").hgetall(f"{self.prefix}{ground}:sent").execute())
        return [Revision(int(h["n"]), h["hash"], h["at"], h["by"], sent.get(h["n"], ""))
                for _, h in rows]

    async def revise(self, ground: str, digest: str, at: str, by: str) -> tuple[Revision, bool]:
        """The revision whose content has this hash: the current one when it is unchanged,
        else a new one numbered next (True). Two writers racing: one numbers it."""
        for _ in range(3):
            revs = await self.revisions(ground)
            if revs and revs[-1].digest == digest:
                return revs[-1], False
            cur = f"{ground}:cur"
            check: Op = RequireIn(cur, "hash", [revs[-1].digest], guard(Reason.CHANGED, ground)) \
                if revs else RequireMissing(cur, guard(Reason.CHANGED, ground))
            try:
                applied = await self.gateway.apply(self.prefix, [
                    check, Incr(f"{ground}:n", "n"), Hset(cur, {"hash": digest}),
                    Xadd(f"{ground}:revs", {"n": Var("n"), "hash": digest, "at": at,
                                            "by": by})])
            except Refused:
                continue  # another writer revised it meanwhile: look again
            return Revision(int(applied.vars["n"]), digest, at, by), True
        raise Refused(Reason.CHANGED, ground)

    async def mark_sent(self, ground: str, n: int, at: str) -> None:
        """Record that revision n went to the regulator (its reminder then stops)."""
        await self.gateway.call(lambda r: r.hsetnx(f"{self.prefix}{ground}:sent", str(n), at))

    async def claim_reminder(self, ground: str, n: int, at: str, outbox: list[Op]) -> bool:
        """Claim the reminder of revision n and write its messages (`outbox`: ops of the
        deployment's outbox, bot.store.outbox.OPS_OUTBOX) in one script: a crash after the
        claim cannot lose them. True for the one replica that claimed it."""
        key = f"mlaw:{ground}:remind:{n}"
        try:
            await self.gateway.apply(ops_prefix(self.space), [
                RequireMissing(key, guard(Reason.CLAIMED)), Set(key, at, CLAIM_TTL), *outbox])
        except Refused:
            return False
        return True

    async def ack_times(self, fixture: str, bid: str) -> dict[str, str]:
        """who -> when they pressed "I have it" on a broadcast or procedure."""
        got: dict[str, str] = await self.gateway.call(
            lambda r: r.hgetall(f"{fx_prefix(fixture, self.space)}bc:{bid}:ack"))
        return got
