"""Briefing sign-off: a briefing's version stamp (a short hash of what stewards read), the
"I have read it" button that goes with it, and the share signed off before a cut-off."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace

from bot.domain.messages import Button, Reply


def briefing_version(text: str) -> str:
    """A short stamp of a briefing's text: a changed briefing has a new one."""
    return "v" + hashlib.sha256(text.encode()).hexdigest()[:6]


def stamped(reply: Reply) -> tuple[str, Reply]:
    """(version, the steward briefing with its version line and one-tap sign-off button)."""
    version = briefing_version(reply.text)
    return version, replace(reply, text=reply.text + f"\nVersion {version}",
                            buttons=[[Button(f"✅ I have read it ({version})",
                                             f"/briefed {version}", "primary")]])


@dataclass(frozen=True)
class SignOff:
    """Who has signed off the current briefing version (who -> when, ISO) and when it was
    first shown or sent."""

    version: str
    shown_at: str
    acks: dict[str, str]

    def signed(self, stewards: list[str], before: str = "") -> list[str]:
        """The stewards who signed it off (before an ISO time, when given)."""
        return [w for w in stewards if w in self.acks and (not before or self.acks[w] < before)]


def percent(n: int, of: int) -> int:
    """n of `of` as a whole percentage (0 when there is nobody to count)."""
    return round(100 * n / of) if of else 0
