"""When a broadcast's copies reached its targeted stewards, and how many acknowledged how
soon: its one-to-many post reaches every member of its chat when the platform takes it, a
direct message reaches its steward when that is taken (delivery records both)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime

from bot.domain.procedures import Broadcast

SOON_S = (60, 300)  # acknowledged within a minute, and within five, of being sent


@dataclass(frozen=True)
class CopyReach:
    """A broadcast's reach and acknowledgement times (`recorded` False: delivery kept no
    times for it, e.g. a record older than the times)."""

    reached: int  # targeted stewards whose copy is recorded delivered
    last: datetime | None  # when the last of them got it (None: none did)
    not_reached: tuple[str, ...]  # rota names of targeted stewards with no delivery recorded
    acked_soon: tuple[int, ...]  # acknowledged within each of SOON_S seconds of being sent
    recorded: bool


def copy_reach(bc: Broadcast, times: dict[str, int], acks: Iterable[datetime],
               sent_at: datetime) -> CopyReach:
    """Each targeted steward's reach: the earlier of their direct message's delivery and,
    for a member of the post's chat, the post's; `times`: who or 'post:<platform>' -> epoch
    ms; `acks`: when each "I have it" came."""
    names = dict(bc.names)
    when: list[int] = []
    missed: list[str] = []
    for who in sorted((*bc.acked, *bc.missing)):
        got = [t for t in (times.get(who), times.get("post:" + who.split(":", 1)[0])
                           if who in bc.posted else None) if t is not None]
        if got:
            when.append(min(got))
        else:
            missed.append(names.get(who) or who)
    took = [(a - sent_at).total_seconds() for a in acks]
    soon = tuple(sum(1 for s in took if s <= w) for w in SOON_S)
    if not times:  # delivery kept no times for it: nobody is named as not reached
        return CopyReach(0, None, (), soon, False)
    return CopyReach(len(when), datetime.fromtimestamp(max(when) / 1000, UTC) if when else None,
                     tuple(missed), soon, True)
