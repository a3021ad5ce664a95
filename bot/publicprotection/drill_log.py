"""The drill log that evidences each procedure: every time it was sent in a drill (a
replayed fixture), to whom, how many of the planned stewards it reached, and how soon they
acknowledged it (first, median and last "I have it", in seconds after it was sent; how many
by +1 and +5 minutes), and when its copies reached the last targeted steward."""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import dataclass

from bot.domain.clock import parse_iso
from bot.domain.copy_reach import copy_reach
from bot.domain.fixture.fixture_model import Fixture
from bot.domain.procedures import Broadcast


@dataclass(frozen=True)
class DrillRow:
    """One procedure sent in one drill, and how it reached and was acknowledged."""

    procedure: str  # a PROCEDURES key
    fixture: str
    title: str
    at: str  # when control sent it (ISO UTC)
    target: str  # where it went, as a line names it
    planned: int  # stewards the rota planned for its target
    sent: int  # those the bot reached with it
    unreached: int  # planned stewards with no account (radioed)
    acked: int
    first_ack_s: int | None = None
    median_ack_s: int | None = None
    last_ack_s: int | None = None
    delivered: int | None = None  # targeted stewards whose copy is recorded delivered
    last_reach_s: int | None = None  # seconds after sending the last of them got it
    acked_soon: tuple[int, int] = (0, 0)  # acknowledged by +1 and by +5 minutes
    not_reached: tuple[str, ...] = ()  # rota names of targeted stewards not delivered to

    @property
    def reach_pct(self) -> int:
        """Sent as a whole percentage of planned."""
        return round(100 * self.sent / self.planned) if self.planned else 0

    @property
    def ack_pct(self) -> int:
        """Acknowledged as a whole percentage of planned."""
        return round(100 * self.acked / self.planned) if self.planned else 0

    def as_json(self) -> dict[str, object]:
        """The row as the document's JSON holds it."""
        return {"procedure": self.procedure, "fixture": self.fixture, "title": self.title,
                "sent_at": self.at, "target": self.target, "planned": self.planned,
                "reached": self.sent, "unreached": self.unreached, "acknowledged": self.acked,
                "first_ack_s": self.first_ack_s, "median_ack_s": self.median_ack_s,
                "last_ack_s": self.last_ack_s, "delivered": self.delivered,
                "last_reach_s": self.last_reach_s, "acknowledged_by_1min": self.acked_soon[0],
                "acknowledged_by_5min": self.acked_soon[1], "not_reached": list(self.not_reached)}


def drill_rows(fx: Fixture, sent: list[Broadcast], acks: dict[str, dict[str, str]],
               label: Callable[[str], str], procedures: tuple[str, ...],
               times: dict[str, dict[str, int]] | None = None) -> list[DrillRow]:
    """The rows of one drill: each procedure it sent (`acks`: broadcast id -> who -> when
    they acknowledged; `times`: broadcast id -> its copies' delivery times)."""
    out = []
    for bc in sent:
        if bc.kind not in procedures:
            continue
        start = parse_iso(bc.at)
        pressed = [parse_iso(t) for t in acks.get(bc.id, {}).values()]
        took = sorted(max(0, int((t - start).total_seconds())) for t in pressed)
        reach = copy_reach(bc, (times or {}).get(bc.id, {}), pressed, start)
        last = reach.last
        out.append(DrillRow(bc.kind, fx.id, fx.title, bc.at, label(bc.target), bc.of,
                            bc.sent, len(bc.unreached), len(bc.acked),
                            took[0] if took else None,
                            int(statistics.median(took)) if took else None,
                            took[-1] if took else None,
                            reach.reached if reach.recorded else None,
                            max(0, int((last - start).total_seconds())) if last else None,
                            (reach.acked_soon[0], reach.acked_soon[1]),
                            reach.not_reached if reach.recorded else ()))
    return out
