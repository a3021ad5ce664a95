"""The deadline sweep: every fixture's `esc` sorted set, swept every second.

A deadline is `<key>:<tag>` in the fixture's sorted set, written in the round trip of the
command that starts it (a report, a decision with a review time, a missing-person search, a
broadcast posted once). The tag names the home that fires it: each home hands the root its
firers (`handlers/<home>/__init__.py` `DEADLINES`), the root (`handlers/__init__.py`) gives
them to this sweep as a ticker. The store's claim guards each firing, so it fires once even
with several replicas sweeping at the same second.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from datetime import UTC, datetime

from bot.core.dispatch import Core
from bot.domain.fixture.fixture_model import Fixture
from bot.domain.messages import Outbound
from bot.store import Store, StoreUnavailable, Unconfirmed
from bot.store.deadline_keys import Deadlines

log = logging.getLogger(__name__)
# (core, incident log, fixture, key before the ':', due unix time, now) -> what it sent
Firer = Callable[[Core, Store, Fixture, str, int, datetime], Awaitable[list[Outbound]]]


async def swept_fixtures(core: Core, deadlines: Deadlines) -> list[str]:
    """Fixtures whose deadlines this process sweeps: every indexed one plus the active one
    (a safety net for deadlines written before the index existed); in a replay only the
    fixtures its drill created."""
    if core.drill is not None:
        return sorted(core.drill.created)
    ids = await deadlines.escalating_fixtures()
    active = await core.fixtures.active()
    if active is not None:
        ids.add(active.id)
    return sorted(ids)


async def sweep_deadlines(
    core: Core, store: Store, deadlines: Deadlines, now: datetime, firers: Mapping[str, Firer]
) -> list[Outbound]:
    """Fire every deadline due by `now` in every swept fixture through the firer of its tag
    (`store`: the incident log, `deadlines`: what is pending); send and return the
    messages. A tag no home fires is dropped. Safe to run on every replica at once."""
    due = await deadlines.due_deadlines_of(await swept_fixtures(core, deadlines),
                                           int(now.timestamp()))
    outs: list[Outbound] = []
    unanswered: StoreUnavailable | None = None  # a slot that did not answer, said once
    for fx_id, rows in due.items():
        fx = await store.fixture(fx_id)
        if fx is None:
            continue
        for member, when in rows:
            key, _, tag = member.partition(":")
            fire = firers.get(tag)
            try:
                if fire is None:
                    await deadlines.drop_deadline(fx.id, member)
                    continue
                outs += await fire(core, store, fx, key, when, now)
            except Unconfirmed:  # written; its cards go once a replica has it
                log.warning("deadline %s of %s fired, not yet on a replica (fired again if a "
                            "failover loses it)", member, fx.id)
            except StoreUnavailable as exc:  # due again next sweep; other slots go on
                unanswered = exc
            except Exception:
                log.exception("deadline %s of %s failed", member, fx.id)
    if outs:
        await core.notifier.send(outs)
    if unanswered is not None:
        raise unanswered  # the ticker tells the outage log, once
    if core.drill is None:
        await deadlines.retire_escalations()  # the index shrinks as fixtures end
    return outs


async def next_due(core: Core, deadlines: Deadlines) -> datetime | None:
    """When the next deadline of a swept fixture falls due (replay steps to it)."""
    ts = await deadlines.first_deadline_of(await swept_fixtures(core, deadlines))
    return datetime.fromtimestamp(ts, UTC) if ts is not None else None
