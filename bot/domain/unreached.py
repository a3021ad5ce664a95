"""A rota steward the bot cannot reach (no linked account): tabard, the rota's name, post and
zone, kept with every count whose denominator is the rota so they can be named and radioed."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Unreached:
    """A planned steward no message of the bot reaches: radio them."""

    tabard: str
    name: str
    post: str  # the post's name, as the plan has it
    zone: str  # the post's zone id

    def show(self) -> str:
        """'15 Steward 15 (Block 256 gangway)': tabard and name as the rota has them."""
        return f"{self.tabard} {self.name} ({self.post})"


def dump(people: Iterable[Unreached]) -> str:
    """The list as JSON, for a record's field."""
    return json.dumps([[u.tabard, u.name, u.post, u.zone] for u in people])


def load(raw: str | None) -> tuple[Unreached, ...]:
    """A list dumped by `dump` (none when empty or absent)."""
    return tuple(Unreached(*row) for row in json.loads(raw)) if raw else ()


def radio_list(people: tuple[Unreached, ...], shown: int = 0) -> str:
    """'15 Steward 15 (Block 256 gangway), …' (the first `shown`, then '+n more'; all when
    `shown` is 0)."""
    cut = people[:shown] if shown else people
    more = len(people) - len(cut)
    return ", ".join(u.show() for u in cut) + (f" (+{more} more)" if more else "")
