"""Control told once, by any replica, when reports for a fixture are being refused (the
master of the fixture's slot takes no writes: stewards are answered NOT logged), and once
when one is logged again."""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from typing import Protocol

from bot.core.delivery_port import Delivery
from bot.domain.fixture.fixture_model import Fixture
from bot.domain.messages import Outbound, Reply
from bot.store import StoreUnavailable

log = logging.getLogger(__name__)

QUIET_S = 30.0  # no refusal here for this long: a new one may be a new episode
CLAIM_S = 3600  # a notice's claim lasts this long if nobody sees the recovery


class NoticeClaims(Protocol):
    """Claims shared by every replica, so one of them tells (bot.store.notices.Notices)."""

    async def claim_notice(self, name: str, ttl_s: int) -> bool:
        """Claim a notice once: True for the first to ask."""

    async def drop_notice(self, name: str) -> bool:
        """Drop a claim: True for the one that removed it."""


def refused_reply(fx: Fixture) -> Reply:
    """Control's card when reports for a fixture are being refused."""
    return Reply(f"Reports for {fx.title} are being refused: the log store takes no writes "
                 "for this fixture (its Redis master has no replica to confirm them). "
                 "Stewards are told NOT logged: take reports by radio until this clears.",
                 title="⚠ Reports NOT being logged")


def recovered_reply(fx: Fixture) -> Reply:
    """Control's card when reports for the fixture are logged again."""
    return Reply(f"Reports for {fx.title} are being logged again.",
                 title="Reports logged again")


class RefusedReports:
    """Which fixtures this replica saw refuse reports lately; tells control through the
    notifier when a shared claim says no replica has yet (or, the claims away too, anyway:
    better twice than never)."""

    def __init__(self, claims: NoticeClaims, notifier: Delivery,
                 monotonic: Callable[[], float] = time.monotonic) -> None:
        self.claims = claims
        self.notifier = notifier
        self.monotonic = monotonic
        self.refusing: dict[str, float] = {}  # fixture id -> last refusal seen here

    async def refused(self, fx: Fixture) -> None:
        """A report for `fx` was refused (WritesRefused)."""
        now = self.monotonic()
        last = self.refusing.get(fx.id)
        self.refusing[fx.id] = now
        if last is not None and now - last < QUIET_S:
            return
        if await self._claim(lambda: self.claims.claim_notice(_name(fx.id), CLAIM_S)):
            log.warning("reports for %s refused (its slot takes no writes): control told",
                        fx.id)
            await self._tell(fx, refused_reply(fx))

    async def logged(self, fx: Fixture) -> None:
        """A write for `fx` went through: if it was refusing here, it is over."""
        if self.refusing.pop(fx.id, None) is None:
            return
        if await self._claim(lambda: self.claims.drop_notice(_name(fx.id))):
            log.warning("reports for %s logged again: control told", fx.id)
            await self._tell(fx, recovered_reply(fx))

    @staticmethod
    async def _claim(ask: Callable[[], Awaitable[bool]]) -> bool:
        try:
            return await ask()
        except StoreUnavailable:
            return True

    async def _tell(self, fx: Fixture, reply: Reply) -> None:
        try:
            await self.notifier.send([Outbound("control", reply, fixture=fx.id)])
        except Exception as exc:  # control's card is a courtesy: the answer must still go
            log.warning("control not told about %s (%s)", fx.id, exc.__class__.__name__)


def _name(fixture_id: str) -> str:
    return f"reports-refused:{fixture_id}"
