"""The pack's stewarding section as plain values: posts filled and on per zone, each roll
call's result (asked, answered, missing), briefing sign-offs, and every procedure or
broadcast with how many of the planned stewards had it. Stewards are counted; only the rota's
stewards a message could not reach are named (tabard, rota name, post), as control radioed
them."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from bot.domain.clock import parse_iso
from bot.domain.copy_reach import CopyReach, copy_reach
from bot.domain.deployment import Post, fill_by_zone
from bot.domain.ledger import Event
from bot.domain.procedures import Broadcast, in_zone
from bot.domain.unreached import Unreached

if TYPE_CHECKING:
    from bot.store.stewarding_keys import Stewarding


@dataclass(frozen=True)
class ZoneRow:
    """One zone's posts: planned, filled from the rota, and checked in on."""

    zone: str
    planned: int
    filled: int
    on_post: int

    @property
    def fill_pct(self) -> int:
        """Filled as a whole percentage of planned."""
        return round(100 * self.filled / self.planned) if self.planned else 0


@dataclass(frozen=True)
class RollCallRow:
    """One roll call: the posts it asked, how many checked in, how many did not."""

    id: str
    at: datetime
    target: str
    asked: int
    answered: int

    @property
    def missing(self) -> int:
        """Posts asked that never checked in."""
        return self.asked - self.answered


@dataclass(frozen=True)
class MessageRow:
    """A procedure or broadcast: what, when, to whom, sent to and acknowledged by."""

    id: str
    at: datetime
    word: str
    target: str
    procedure: bool
    sent: int
    acked: int
    planned: int = 0  # stewards the rota planned for its target (0: older records, = sent)
    unreached: tuple[Unreached, ...] = ()  # planned stewards the bot could not reach
    acks: tuple[datetime, ...] = ()  # when each "I have it" came, in time order
    reach: CopyReach | None = None  # when its copies reached the targeted stewards

    @property
    def received(self) -> datetime | None:
        """When the last targeted steward reached so far got their copy (None: no time
        recorded)."""
        return self.reach.last if self.reach is not None else None

    @property
    def acked_by(self) -> datetime | None:
        """When the last acknowledgement so far came (None: none)."""
        return self.acks[-1] if self.acks else None

    @property
    def of(self) -> int:
        """The denominator of its counts: the plan."""
        return max(self.planned, self.sent)


@dataclass(frozen=True)
class StewardRecord:
    """Everything of the section (empty lists: nothing of that kind was recorded)."""

    zones: list[ZoneRow]
    roll_calls: list[RollCallRow]
    briefing_version: str
    briefing_acks: int
    rota_size: int
    messages: list[MessageRow]

    @property
    def present(self) -> bool:
        """Whether there is anything to show."""
        return bool(self.rota_size or self.roll_calls or self.briefing_version
                    or self.messages)


def ack_times(events: list[Event]) -> dict[str, tuple[datetime, ...]]:
    """Message id -> when each "I have it" was logged, in time order."""
    out: dict[str, list[datetime]] = {}
    for ev in events:
        if ev.kind == "stewards.acknowledged":
            out.setdefault(str(ev.data.get("id", "")), []).append(parse_iso(ev.at))
    return {k: tuple(sorted(v)) for k, v in out.items()}


def steward_record(posts: list[Post], filled: dict[str, object],
                   on_post: dict[str, tuple[str, str]], sent: list[Broadcast],
                   briefing: tuple[str, dict[str, str]],
                   acks: dict[str, tuple[datetime, ...]] | None = None,
                   times: dict[str, dict[str, int]] | None = None) -> StewardRecord:
    """The section from what the store holds (posts from the ground's plan); `acks` and
    `times`: each message's acknowledgement times and its copies' delivery times."""
    zones = [ZoneRow(z.zone, z.planned, z.filled,
                     sum(1 for p in posts if p.zone == z.zone and p.id in on_post))
             for z in fill_by_zone(posts, {k: "" for k in filled})] if filled or on_post \
        else []
    calls = []
    for bc in sent:
        if bc.kind == "rollcall":
            zone = bc.target.removeprefix("zone:") if bc.target.startswith("zone:") else ""
            asked = [p for p in posts if not zone or in_zone(p.zone, zone)]
            calls.append(RollCallRow(bc.id, parse_iso(bc.at), bc.target, len(asked),
                                     sum(1 for p in asked if p.id in on_post)))
    messages = message_rows(sent, acks or {}, times or {})
    version, signed = briefing
    return StewardRecord(zones, calls, version, len(signed), len(filled), messages)


def message_rows(sent: list[Broadcast], acks: dict[str, tuple[datetime, ...]],
                 times: dict[str, dict[str, int]]) -> list[MessageRow]:
    """Every procedure, missing-person message and broadcast (roll calls are counted as
    check-ins instead), with its plan, reach and acknowledgement times (`times`: each
    one's delivery times, bot.store.stewarding_keys.Stewarding.reach_times)."""
    return [MessageRow(bc.id, at, bc.word, bc.target, bc.procedure, bc.sent,
                       len(bc.acked), bc.planned, bc.unreached, acks.get(bc.id, ()),
                       copy_reach(bc, times.get(bc.id, {}), acks.get(bc.id, ()), at))
            for bc in sent if bc.kind != "rollcall" for at in (parse_iso(bc.at),)]


async def read_messages(state: Stewarding, fx: str, events: list[Event]) -> list[MessageRow]:
    """The fixture's messages with their acknowledgement and delivery times, from the store
    (two round trips)."""
    sent = await state.broadcasts(fx)
    times = await state.reach_times(fx, [bc.id for bc in sent if bc.kind != "rollcall"])
    return message_rows(sent, ack_times(events), times)
