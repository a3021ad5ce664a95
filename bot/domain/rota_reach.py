"""Who a broadcast's target plans on the rota, and who of them the bot can and cannot reach:
every count's denominator is the plan (the rota's stewards for the targeted zones, and the
roster's), never the linked accounts alone; the unreached are named."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass

from bot.domain.deployment import Post
from bot.domain.grounds import Ground
from bot.domain.plurals import counted
from bot.domain.procedures import (
    PROCEDURES,
    Broadcast,
    Steward,
    Target,
    in_zone,
    reaches,
    target_label,
    targeted,
)
from bot.domain.unreached import Unreached, dump, radio_list


@dataclass(frozen=True)
class Reach:
    """The stewards a target plans: those the bot reaches, and the rota's it cannot."""

    to: tuple[Steward, ...]
    unreached: tuple[Unreached, ...]

    @property
    def planned(self) -> int:
        """Every planned steward of the target, reachable or not."""
        return len(self.to) + len(self.unreached)


@dataclass(frozen=True)
class ZoneCount:
    """One zone's figures for a message: planned, sent to, acknowledged, not reached."""

    zone: str
    planned: int
    sent: int
    acked: int
    unreached: tuple[Unreached, ...]


def unreached_for(target: Target, ground: Ground, filled: dict[str, tuple[str, str]],
                  links: dict[str, str], posts: list[Post]) -> tuple[Unreached, ...]:
    """The rota's stewards the target plans who have no linked account, in plan order."""
    return tuple(Unreached(filled[p.id][0], filled[p.id][1], p.name, p.zone) for p in posts
                 if p.id in filled and not links.get(filled[p.id][0])
                 and reaches(target, "steward", p.zone, ground))


def reach_of(stewards: Iterable[Steward], target: Target, ground: Ground,
             filled: dict[str, tuple[str, str]], links: dict[str, str],
             posts: list[Post]) -> Reach:
    """Whom a target reaches (tonight's stewards) and the rota's it cannot."""
    return Reach(tuple(targeted(stewards, target, ground)),
                 unreached_for(target, ground, filled, links, posts))


def plan_record(reach: Reach) -> dict[str, str]:
    """A message's plan as fields of its record: planned, the unreached, each one's zone
    and rota name."""
    return {"planned": str(reach.planned), "unreached": dump(reach.unreached),
            "zones": json.dumps([[s.who, s.zone] for s in reach.to]),
            "names": json.dumps({s.who: s.name for s in reach.to})}


def posted(to: Iterable[Steward], members: frozenset[str]) -> dict[str, str]:
    """Who of those a message was sent to its one-to-many post reached (members of its
    chat), as a field of its record: their reach is the post's delivery time."""
    return {"posted": json.dumps(sorted(s.who for s in to if s.who in members))}


def short_target(target: str, ground: Ground) -> str:
    """A target as a count's line names it: a zone by its short name ('STB upper 250-262')."""
    if target.startswith("zone:"):
        return ground.short_label(target.removeprefix("zone:"))
    return target_label(target, ground)


def radio_line(planned: int, unreached: tuple[Unreached, ...], label: str,
               shown: int = 0) -> str:
    """'20 stewards planned in STB upper: 19 not on the bot — radio them: 250 A. Smith
    (Block 250 gangway), …'; '' when the bot reaches every planned steward."""
    if not unreached:
        return ""
    return (f"{counted(planned, 'steward')} planned in {label}: {len(unreached)} not on the bot — "
            f"radio them: {radio_list(unreached, shown)}")


def by_zone(bc: Broadcast) -> list[ZoneCount]:
    """A message's figures per zone (zones in the order its stewards were planned)."""
    order: list[str] = []
    for zone in [z for _, z in bc.zones] + [u.zone for u in bc.unreached]:
        if zone not in order:
            order.append(zone)
    acked = set(bc.acked)
    out = []
    for zone in order:
        sent = [w for w, z in bc.zones if z == zone]
        gone = tuple(u for u in bc.unreached if u.zone == zone)
        out.append(ZoneCount(zone, len(sent) + len(gone), len(sent),
                             sum(1 for w in sent if w in acked), gone))
    return out


def covers(allclear: str, target: str) -> bool:
    """Whether an all-clear for one target ends a procedure for another ('all' ends every
    one; a zone's ends its own and those of the zones inside it)."""
    if allclear in ("all", target):
        return True
    return allclear.startswith("zone:") and target.startswith("zone:") and \
        in_zone(target.removeprefix("zone:"), allclear.removeprefix("zone:"))


def live_procedures(sent: list[Broadcast]) -> list[Broadcast]:
    """The procedures still in force: sent (oldest first) and not ended by a later all-clear
    for their target."""
    out: list[Broadcast] = []
    for bc in sent:
        if bc.kind == "allclear":
            out = [p for p in out if not covers(bc.target, p.target)]
        elif bc.kind in PROCEDURES:
            out.append(bc)
    return out


def left_out(filled: dict[str, tuple[str, str]], links: dict[str, str], posts: list[Post],
             told: set[str]) -> tuple[Unreached, ...]:
    """The rota's stewards a message to `told` (accounts) left out: no linked account, or an
    account not among them; in plan order."""
    return tuple(Unreached(filled[p.id][0], filled[p.id][1], p.name, p.zone) for p in posts
                 if p.id in filled and links.get(filled[p.id][0], "") not in told)
