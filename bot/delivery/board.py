"""The live board a control chat gets at a flashpoint: one pinned message, edited in place.

While a chat is in digest mode (more new incidents than its budget takes one by one), it also
gets a board listing the open incidents (worst first, then oldest), with counts and "N more"
when long. The board is rendered at send time from the latest card of each incident, so a
superseded state is never sent. When the burst has been over for a while it gets a final
edit and is unpinned. Built from the cards the chat receives; no platform details here.
The board's timers live here too: when its next turn (pin, edit, end) is due, and the
timer that wakes the chat's worker for it while the chat is otherwise idle.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from bot.domain.messages import Outbound, Reply
from bot.domain.plurals import counted

REF = "board"  # the board's live-message ref (its platform id is kept in the store)
MAX_JUST_IN = 60  # ids on the "Just in" line
MAX_ROWS = 30  # incidents listed; the rest are counted ("N more")
EDIT_EVERY_SLOTS = 5  # one board edit per this many of the chat's sustained message slots
QUIET_S = 60.0  # seconds without a digest before the flashpoint counts as over
# New incidents in one digest that make a flashpoint (a board). Fewer (a busy spell: a card
# every 2 s into a group Telegram allows 20 a minute) are covered by the digests alone: a
# board and its pin would spend two of the chat's slots the next cards need.
BURST_FROM = 5
ACTIONABLE = 4  # severity from which an incident always gets its own card (the notifier's)


@dataclass
class Row:
    """One incident as the board shows it, from its latest card."""

    title: str  # "INC-7 Throwing missiles"
    place: str
    severity: int
    status: str
    first_seen: float
    closed: bool = False

    def line(self) -> str:
        """'INC-7 Throwing missiles · STB walkway · s4 · Reported'."""
        return " · ".join(p for p in (self.title, self.place, f"s{self.severity}",
                                      self.status) if p)


def incident_id(reply: Reply) -> str:
    """The INC id of the incident a message shows ('' if none)."""
    return reply.card.id if reply.card is not None else ""


def row_of(reply: Reply, seen: float) -> Row | None:
    """The board row of an incident card; None for any other message."""
    card = reply.card
    if card is None:
        return None
    return Row(f"{card.id} {card.what}", card.place, card.severity, card.status_label, seen,
               card.closed)


@dataclass
class Board:
    """One chat's board state: the incidents it knows, and whether the board is live."""

    rows: dict[str, Row] = field(default_factory=dict)  # incident ref -> latest row
    fixture: str = ""
    live: bool = False
    dirty: bool = False  # something changed since the last board edit
    ending: bool = False  # the final edit is owed
    pin_owed: str = ""  # a board just posted, pinned once a digest has had its turn
    last_edit: float | None = None
    last_burst: float | None = None
    turn_at: float = float("-inf")  # when the board last took one of the chat's slots
    retry_at: float = float("-inf")  # no board edit before (no shared edit slot free)
    timer: asyncio.Task[None] | None = None  # wakes the chat's worker for the board's turn

    def note(self, out: Outbound, now: float) -> None:
        """Take an incident card's latest state (other messages are ignored)."""
        if not out.ref or out.quote or out.edit or out.ref == REF:
            return
        old = self.rows.get(out.ref)
        row = row_of(out.reply, old.first_seen if old else now)
        if row is None:
            return
        self.rows[out.ref] = row
        self.fixture = out.fixture or self.fixture
        if self.live:
            self.dirty = True

    def burst(self, now: float, fixture: str, fresh: int = BURST_FROM) -> None:
        """A digest of `fresh` new incidents went out: the board stays live, or goes live
        when they are a flashpoint's (BURST_FROM or more)."""
        if not self.live and fresh < BURST_FROM:
            return
        self.last_burst = now
        self.fixture = fixture or self.fixture
        if not self.live:
            self.live = self.dirty = True
            self.ending = False

    def due(self, now: float, gap: Callable[[], float], idle: bool,
            last_digest: float | None) -> str:
        """'end', 'pin' or 'edit' when the board's turn has come, else ''. `gap`: seconds
        between board edits; `idle`: nothing else waits in the chat; `last_digest`: when
        the chat's last digest went (None: not at a flashpoint)."""
        if not self.live:
            return ""
        if self.last_burst is not None and now - self.last_burst >= QUIET_S and idle:
            return "end"
        if self.pin_owed and (self.last_edit is None or last_digest is None or
                              last_digest > self.last_edit or idle):
            return "pin"  # not straight after the post: a digest goes in between
        if self.dirty and now >= self.retry_at and (
                self.last_edit is None or now - self.last_edit >= gap()):
            return "edit"
        return ""

    def arm(self, now: float, gap: Callable[[], float],
            sleep: Callable[[float], Awaitable[object]], wake: asyncio.Event) -> None:
        """While the board is live and the chat idle, set `wake` when its turn comes."""
        self.disarm()
        if not self.live or self.last_burst is None:
            return
        at = self.last_burst + QUIET_S
        if self.dirty and self.last_edit is not None:
            at = min(at, max(self.last_edit + gap(), self.retry_at))

        async def ring() -> None:
            await sleep(max(0.0, at - now))
            wake.set()
        self.timer = asyncio.create_task(ring())

    def disarm(self) -> None:
        """Stop the board's timer."""
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None

    def open_rows(self) -> list[Row]:
        """Open incidents, worst first, then oldest first."""
        return sorted((r for r in self.rows.values() if not r.closed),
                      key=lambda r: (-r.severity, r.first_seen))

    def render(self, hhmm: str, just_in: list[str] | None = None) -> Reply:
        """The board's current text; `just_in` names incidents no digest has named yet
        (so a board edit never delays the news: the digest details them next)."""
        rows = self.open_rows()
        counts: dict[int, int] = {}
        for r in rows:
            counts[r.severity] = counts.get(r.severity, 0) + 1
        by_sev = ", ".join(f"s{s}: {n}" for s, n in sorted(counts.items(), reverse=True))
        lines = [r.line() for r in rows[:MAX_ROWS]]
        if len(rows) > MAX_ROWS:
            lines.append(f"… {len(rows) - MAX_ROWS} more")
        head = f"{len(rows)} open" + (f" ({by_sev})" if by_sev else "")
        lines.insert(0, f"{head} · updated {hhmm}")
        if just_in:  # ids only, so a long burst still fits one message
            more = f" (+{len(just_in) - MAX_JUST_IN})" if len(just_in) > MAX_JUST_IN else ""
            lines.insert(1, "Just in: " + ", ".join(just_in[:MAX_JUST_IN]) + more)
        return Reply("\n".join(lines), title="📋 Live board (flashpoint)")

    def final(self, hhmm: str, carded: set[str] | frozenset[str] = frozenset()) -> Reply:
        """The board's last text, once the flashpoint is over: which open incidents have a
        card of their own in this chat (`carded`: their refs) and where the others are."""
        rows = self.open_rows()
        own = [ref for ref, r in sorted(self.rows.items(),
                                        key=lambda kv: (-kv[1].severity, kv[1].first_seen))
               if not r.closed and ref in carded]
        rest = len(rows) - len(own)
        lines = [f"Flashpoint over at {hhmm} — board no longer live. "
                 f"{counted(len(rows), 'incident')} still open."]
        if own:
            more = f" (+{len(own) - MAX_JUST_IN})" if len(own) > MAX_JUST_IN else ""
            lines.append(f"With a card of their own above: {', '.join(own[:MAX_JUST_IN])}"
                         f"{more}.")
        if rest:
            lines.append(f"{'The other' if own else 'All'} {rest} got no card of their own "
                         f"(below severity {ACTIONABLE}): they are named in the digests above "
                         "and listed in the web view (/web).")
        return Reply("\n".join(lines), title="📋 Board (no longer live)")
