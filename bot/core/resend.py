"""Commands whose write may have run when the log store stopped answering.

Redis can die after running a write but before its reply arrives: the sender is told "NOT
CONFIRMED" and sends it again, with a new message id and so a new dedupe key. The resend of
the same text by the same person in the same chat reuses the first attempt's dedupe key, so
the store logs it at most once, on whichever replica the resend reaches.

The memory is written exactly when the store stopped answering, so it is kept here first and
written through to Redis (per reporter, short TTL) once the store answers again; the replica
that wrote it then tells the others on the changes channel, and a replica that (re)subscribes
reads the store's marker. A lookup checks this process, then Redis, but Redis only while this
process has been told of unsure writes (or its own entry was written through): a healthy
night costs no round trip.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Protocol

from bot.domain.messages import Command
from bot.store import StoreUnavailable

NOT_CONFIRMED = ("NOT CONFIRMED: the log store stopped answering; it may or may not have been "
                 "logged. Send it again when it is back: a repeat will not be logged twice.")
UNSURE_CHANGE = "unsure"  # on the changes channel: look resends up in the store for a while


def content_key(cmd: Command) -> str:
    """Who said what where (with which attachments): what makes a resend the same command."""
    files = "|".join(f"{a.kind}:{a.file_id}:{a.caption}" for a in cmd.attachments)
    raw = "\x1f".join((cmd.platform, cmd.chat, cmd.user, cmd.text.strip(), files))
    return hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()


class UnsureStore(Protocol):
    """The store's shared memory of unsure commands (bot/store/unsure.py)."""

    async def remember_unsure(self, who: str, entries: dict[str, str], ttl_s: int) -> None:
        """Record a reporter's unsure commands for ttl_s."""

    async def unsure_key(self, who: str, content: str) -> str | None:
        """The first dedupe key of a reporter's unsure command, if any."""

    async def forget_unsure(self, who: str, content: str) -> None:
        """Forget one unsure command."""

    async def unsure_ttl(self) -> float:
        """Seconds for which some reporter may still have an unsure command."""


@dataclass
class Entry:
    """One unsure command: its first dedupe key, when it was first sent, by whom, and
    whether the store holds it too."""

    key: str
    first: datetime
    who: str
    written: bool = False


class UnsureWrites:
    """First dedupe keys of commands whose outcome is unknown, for a short window."""

    def __init__(self, store: UnsureStore | None = None, window_s: float = 600,
                 limit: int = 10_000) -> None:
        self.store = store
        self.window_s = window_s
        self.limit = limit
        self._keys: OrderedDict[str, Entry] = OrderedDict()
        self._watch_until: datetime | None = None  # look in the store until then

    @property
    def pending(self) -> bool:
        """Some entry is not in the store yet (it was written when the store stopped)."""
        return any(not e.written for e in self._keys.values())

    def watch(self, until: datetime) -> None:
        """Look resends up in the store until `until` (another replica has unsure writes)."""
        if self._watch_until is None or until > self._watch_until:
            self._watch_until = until

    def watching(self, now: datetime) -> bool:
        """Whether a lookup asks the store too."""
        return self._watch_until is not None and now < self._watch_until

    async def resend(self, cmd: Command, now: datetime) -> Command:
        """The command with its first attempt's dedupe key, if this is a resend of one."""
        if not self._keys and not self.watching(now):
            return cmd  # a healthy night: nothing to look up, no round trip
        content = content_key(cmd)
        entry = self._keys.get(content)
        if entry is not None and (now - entry.first).total_seconds() > self.window_s:
            self._keys.pop(content)
            entry = None
        if entry is not None and not entry.written:
            return replace(cmd, dedupe_key=entry.key)  # only this process knows it
        if self.store is None or (entry is None and not self.watching(now)):
            return cmd
        try:  # the store is the truth once written: another replica may have settled it
            key = await self.store.unsure_key(cmd.who, content)
        except StoreUnavailable:
            key = entry.key if entry else None
        if key is None:
            self._keys.pop(content, None)
            return cmd
        self._keys[content] = Entry(key, entry.first if entry else now, cmd.who, written=True)
        return replace(cmd, dedupe_key=key)

    def remember(self, cmd: Command, now: datetime) -> None:
        """The store stopped answering after this command sent a write."""
        if not cmd.dedupe_key:
            return  # nothing to match a resend against
        key = content_key(cmd)
        first = self._keys.pop(key, None)
        self._keys[key] = first or Entry(cmd.dedupe_key, now, cmd.who)
        self.watch(now + timedelta(seconds=self.window_s))
        while len(self._keys) > self.limit:
            self._keys.popitem(last=False)

    async def write_through(self) -> bool:
        """Copy entries the store has not got yet into it; True if any were written."""
        if self.store is None:
            return False
        by_who: dict[str, dict[str, str]] = {}
        for content, e in self._keys.items():
            if not e.written:
                by_who.setdefault(e.who, {})[content] = e.key
        for who, entries in by_who.items():
            try:
                await self.store.remember_unsure(who, entries, int(self.window_s))
            except StoreUnavailable:
                return False  # still away: kept here, tried again later
            for content in entries:
                if content in self._keys:
                    self._keys[content].written = True
        return bool(by_who)

    async def settle(self, cmd: Command) -> None:
        """The command was answered: its outcome is known (everywhere)."""
        if not self._keys:
            return
        entry = self._keys.pop(content_key(cmd), None)
        if entry is not None and entry.written and self.store is not None:
            try:
                await self.store.forget_unsure(cmd.who, content_key(cmd))
            except StoreUnavailable:
                pass  # it lapses with its TTL

    async def learn(self, now: datetime) -> None:
        """Read from the store whether any replica has unsure writes (after subscribing to
        the changes channel, for what was said while this replica was not listening)."""
        if self.store is not None:
            ttl = await self.store.unsure_ttl()
            if ttl > 0:
                self.watch(now + timedelta(seconds=ttl))
