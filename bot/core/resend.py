"""Commands whose write may have run when the log store stopped answering.

Redis can die after running a write but before its reply arrives: the sender is told "NOT
CONFIRMED" and sends it again, with a new message id and so a new dedupe key. The resend of
the same text by the same person in the same chat reuses the first attempt's dedupe key, so
the store logs it at most once. Kept in this process only: a resend that reaches another
replica is not matched (see README).
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from dataclasses import replace
from datetime import datetime

from bot.core.messages import Command

NOT_CONFIRMED = ("NOT CONFIRMED: the log store stopped answering; it may or may not have been "
                 "logged. Send it again when it is back: a repeat will not be logged twice.")


def content_key(cmd: Command) -> str:
    """Who said what where (with which attachments): what makes a resend the same command."""
    files = "|".join(f"{a.kind}:{a.file_id}:{a.caption}" for a in cmd.attachments)
    raw = "\x1f".join((cmd.platform, cmd.chat, cmd.user, cmd.text.strip(), files))
    return hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()


class UnsureWrites:
    """First dedupe keys of commands whose outcome is unknown, for a short window."""

    def __init__(self, window_s: float = 600, limit: int = 10_000) -> None:
        self.window_s = window_s
        self.limit = limit
        self._keys: OrderedDict[str, tuple[str, datetime]] = OrderedDict()

    def resend(self, cmd: Command, now: datetime) -> Command:
        """The command with its first attempt's dedupe key, if this is a resend of one."""
        hit = self._keys.get(content_key(cmd)) if self._keys else None
        if hit is None or (now - hit[1]).total_seconds() > self.window_s:
            return cmd
        return replace(cmd, dedupe_key=hit[0])

    def remember(self, cmd: Command, now: datetime) -> None:
        """The store stopped answering after this command sent a write."""
        if not cmd.dedupe_key:
            return  # nothing to match a resend against
        key = content_key(cmd)
        first = self._keys.pop(key, None)
        self._keys[key] = (first[0] if first else cmd.dedupe_key, first[1] if first else now)
        while len(self._keys) > self.limit:
            self._keys.popitem(last=False)

    def settle(self, cmd: Command) -> None:
        """The command was answered: its outcome is known."""
        if self._keys:
            self._keys.pop(content_key(cmd), None)
