"""One scheduler for every platform (APScheduler AsyncIOScheduler, memory job store).

Plans are data in Redis (bot/store/plans.py), derived from each fixture and
config/briefings.toml (and the slots a home plans itself, handed over as `HomeSlots`: the
automatic roll call from the ground's plan, handlers/stewarding/rollcall_timer.py); the
in-process jobs are rebuilt from them at start and on every fixture change. Every firing is
claimed with SET NX on its slot id before anything is sent, so several replicas send it once.
Live mode uses APScheduler's timers; replay and tests call `run_due(now)` on a virtual clock.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Awaitable, Callable, Mapping
from datetime import UTC, datetime, timedelta
from typing import Protocol

from apscheduler.schedulers.asyncio import AsyncIOScheduler
from apscheduler.triggers.date import DateTrigger
from apscheduler.triggers.interval import IntervalTrigger

from bot.core.dispatch import Core
from bot.domain.briefing.briefing_cadence import (
    POST_MATCH,
    BriefingConfig,
    Slot,
    config_for,
    merge_plan,
)
from bot.domain.clock import Clock, VirtualClock, iso
from bot.domain.fixture.fixture_model import Fixture
from bot.domain.messages import Outbound
from bot.observe import metrics
from bot.store import Store, StoreUnavailable, WritesRefused
from bot.store.ops import Op
from bot.store.plans import Plans
from bot.store.stewarding_keys import Stewarding

log = logging.getLogger(__name__)
Ticker = Callable[[datetime], Awaitable[None]]
RESYNC_S = 60.0  # live replicas re-read plans this often (changes made by another replica)
HORIZON = timedelta(days=3)  # fixtures whose kick-off is older than this are left alone


class SlotContent(Protocol):
    """What a briefing or post-match summary slot says (the briefings home's content),
    made from what was read, before the claim."""

    async def briefing(self, core: Core, store: Store, fx: Fixture, label: str,
                       late_due: datetime | None) -> tuple[list[Outbound], str]:
        """The briefing for every audience, and the steward version's stamp."""
        ...

    async def summary(self, core: Core, store: Store, fx: Fixture,
                      late_due: datetime | None) -> list[Outbound]:
        """The summary for every summary audience."""
        ...


class HomeSlots(Protocol):
    """A kind of slot a home plans, checks and sends itself (the stewarding home's roll
    call), handed to the scheduler by the composition root under its `Slot.kind`."""

    async def plan(self, core: Core, store: Store, fx: Fixture, now: datetime) -> list[Slot]:
        """The fixture's slots of this kind as planned now (saved when they changed)."""
        ...

    async def planned(self, core: Core, store: Store, slot: Slot) -> bool:
        """Whether the slot is still the fixture's plan (not re-timed meanwhile)."""
        ...

    async def send(self, core: Core, store: Store, fx: Fixture, slot: Slot, state: str,
                   by: str, now: datetime) -> list[Outbound] | None:
        """Claim the slot and send it in one write; None when another replica has it."""
        ...


class Scheduler:
    """Rebuilt from plans in Redis; every firing claimed once across replicas."""

    def __init__(self, core: Core, store: Store, plans: Plans, content: SlotContent, *,
                 clock: Clock, live: bool = True, virtual: VirtualClock | None = None,
                 home_slots: Mapping[str, HomeSlots] | None = None) -> None:
        """`store`: the incident log (fixtures); `plans`: briefing plans and slot claims;
        both built once by the composition root (bot/runtime.py scheduler_for). `virtual`:
        the clock `run_due` moves to each slot's due time (replay, tests); None on a clock
        that moves by itself. `content`: what briefings and summaries say (the briefings
        home's); `home_slots`: slot kind -> the home that plans and sends it."""
        self.core = core
        self.store = store
        self.plans = plans  # briefing plans and slot claims
        self.content = content
        self.clock = clock
        self.virtual = virtual
        self.live = live
        self.home_slots: Mapping[str, HomeSlots] = home_slots or {}
        self.tickers: list[tuple[Ticker, float]] = []
        self.cfg: BriefingConfig = config_for(core.settings)
        self.instance = uuid.uuid4().hex[:10]
        self.jobs: dict[str, Slot] = {}  # slot.key -> slot, everything planned and not fired
        self.fired: set[str] = set()
        self.aps: AsyncIOScheduler | None = None
        self._ticking: set[str] = set()  # ticker jobs whose run has not ended

    def add_ticker(self, fn: Ticker, every_s: float = 1.0) -> None:
        """Run fn(now) every `every_s` seconds (escalation sweeps)."""
        self.tickers.append((fn, every_s))
        if self.aps is not None:
            self._add_ticker_job(fn, every_s, len(self.tickers) - 1)

    # ---------------------------------------------------------------- lifecycle
    async def start(self) -> None:
        """Rebuild plans from Redis, catch up on what was due while down, then start firing."""
        await self.resync()
        await self.catch_up(self.clock.now())
        if self.live:
            self.aps = AsyncIOScheduler(timezone=UTC, job_defaults={
                "misfire_grace_time": None, "coalesce": True, "max_instances": 1})
            for i, (fn, every) in enumerate(self.tickers):
                self._add_ticker_job(fn, every, i)
            self.aps.add_job(self._resync_live, IntervalTrigger(seconds=RESYNC_S),
                             id="resync", replace_existing=True)
            for slot in self.jobs.values():
                self._add_aps_job(slot)
            self.aps.start()

    async def stop(self) -> None:
        """Stop firing (plans stay in Redis for the next start)."""
        if self.aps is not None:
            self.aps.shutdown(wait=False)
            self.aps = None

    # ---------------------------------------------------------------- plans
    async def resync(self) -> None:
        """Re-derive every recent fixture's plan and rebuild the in-process jobs from Redis."""
        cutoff = self.clock.now() - HORIZON
        for fx in await self.store.fixtures(drill=self.core.drill is not None):
            if fx.kickoff >= cutoff and self.in_scope(fx.id):
                await self.replan(fx.id, fx)

    def in_scope(self, fx_id: str) -> bool:
        """A replay schedules only the fixtures its drill created, never the live ones."""
        drill = self.core.drill
        return drill is None or fx_id in drill.created

    async def replan(self, fx_id: str, fx: Fixture | None = None) -> list[Slot]:
        """Derive a fixture's plan, save it to Redis, and reschedule its jobs from it."""
        store = self.store
        if not self.in_scope(fx_id):
            return []
        fx = fx or await store.fixture(fx_id)
        if fx is None:
            return []
        now = self.clock.now()
        old = await self.plans.load_plan(fx_id)
        briefings = merge_plan(fx, self.cfg, old, now)
        if [s.to_json() for s in briefings] != [s.to_json() for s in old
                                                 if s.kind == "briefing"]:
            await self.plans.save_briefing_plan(fx_id, briefings)
        slots = briefings + [s for s in old if s.kind == "summary"]
        if fx.phase in POST_MATCH and not any(s.kind == "summary" for s in slots):
            summary = Slot(fx_id, "summary", "summary", now + self.cfg.summary_delay, now)
            await self.plans.add_summary_slot(summary)
            slots = await self.plans.load_plan(fx_id)  # another replica may have planned it first
        for home in self.home_slots.values():  # kept apart: planned by their home
            slots += await home.plan(self.core, self.store, fx, now)
        self._schedule(fx_id, slots)
        return slots

    def _schedule(self, fx_id: str, slots: list[Slot]) -> None:
        for key in [k for k, s in self.jobs.items() if s.fixture == fx_id]:
            del self.jobs[key]
            if self.aps is not None and self.aps.get_job(key):
                self.aps.remove_job(key)
        for slot in slots:
            if slot.key not in self.fired:
                self.jobs[slot.key] = slot
                self._add_aps_job(slot)

    def _add_aps_job(self, slot: Slot) -> None:
        if self.aps is not None and slot.due > self.clock.now():
            self.aps.add_job(self._fire_live, DateTrigger(run_date=slot.due), args=[slot.key],
                             id=slot.key, replace_existing=True)

    def _add_ticker_job(self, fn: Ticker, every: float, i: int) -> None:
        assert self.aps is not None

        key = f"ticker:{i}"

        async def tick() -> None:
            # a tick still waiting on a slow or absent store: this one is not needed (and
            # APScheduler would warn of every such overlap, many a second in an outage)
            if key in self._ticking:
                return
            self._ticking.add(key)
            try:
                await fn(self.clock.now())
            except WritesRefused:  # a slot takes no writes: not "Redis down"
                self.core.outage.refused(None)
            except StoreUnavailable:  # the outage log says so once, not every tick
                self.core.outage.gone()
            except Exception:
                log.exception("ticker %s failed", getattr(fn, "__name__", fn))
            finally:
                self._ticking.discard(key)

        self.aps.add_job(tick, IntervalTrigger(seconds=every), id=key, replace_existing=True,
                         max_instances=2)

    async def on_change(self, what: str, fixture_id: str) -> None:
        """core.hooks: a fixture was added, re-timed, re-categorised, cancelled or phased."""
        if what in ("fixture", "phase"):
            await self.replan(fixture_id)

    async def _resync_live(self) -> None:
        try:
            await self.resync()
            await self.catch_up(self.clock.now())
        except Exception:
            log.exception("scheduler resync failed")

    # ---------------------------------------------------------------- firing
    def due(self, now: datetime) -> list[Slot]:
        """Planned slots due at or before `now`, in time order."""
        return sorted((s for s in self.jobs.values() if s.due <= now),
                      key=lambda s: (s.due, s.fixture, s.kind))

    async def catch_up(self, now: datetime) -> None:
        """Everything that fell due while no replica ran: late if still useful, else missed."""
        for slot in self.due(now):
            await self.fire(slot, now)

    async def run_due(self, now: datetime) -> None:
        """Virtual time: fire everything due up to `now`, in time order (replay, tests)."""
        while slots := self.due(now):
            slot = slots[0]
            if self.virtual is not None:
                self.virtual.set(slot.due)
            await self._tick(slot.due)
            if await self.fire(slot, slot.due) == "retry":
                raise StoreUnavailable(f"{slot.key}: the store is not answering")
            await self.core.notifier.drain()  # delivered at its virtual time, not later
        if self.virtual is not None:
            self.virtual.set(now)
        await self._tick(now)
        await self.core.notifier.drain()

    async def _tick(self, now: datetime) -> None:
        for fn, _ in self.tickers:
            await fn(now)

    async def _fire_live(self, key: str) -> None:
        slot = self.jobs.get(key)
        if slot is None:
            return
        try:
            await self.fire(slot, self.clock.now())
        except Exception:
            log.exception("firing %s failed", key)

    def _state(self, slot: Slot, fx: Fixture, now: datetime) -> str:
        if slot.kind == "briefing" and now >= fx.kickoff - self.cfg.late_cutoff:
            return "missed"
        if slot.kind == "summary" and now - slot.due > self.cfg.summary_grace:
            return "missed"
        if slot.kind == "rollcall" and now >= fx.kickoff:
            return "missed"  # a roll call after kick-off finds nobody it can still help
        return "late" if now - slot.due > self.cfg.on_time_tolerance else "sent"

    async def fire(self, slot: Slot, now: datetime) -> str:
        """Claim a slot and send it (or record it missed): 'sent', 'late', 'missed' or 'skip';
        'retry' when the store is not answering: the slot stays planned and the next
        catch-up (every resync) sends it late or records it missed."""
        self.jobs.pop(slot.key, None)
        if slot.key in self.fired:
            return "skip"
        self.fired.add(slot.key)
        try:
            return await self._claim_and_send(slot, now)
        except StoreUnavailable:
            self.fired.discard(slot.key)
            self.jobs[slot.key] = slot
            log.warning("store not answering: %s %s of %s (due %s) waits until it is back",
                        slot.kind, slot.label, slot.fixture, slot.due)
            return "retry"

    async def _claim_and_send(self, slot: Slot, now: datetime) -> str:
        store = self.store
        fx = await store.fixture(slot.fixture)
        if fx is None or (fx.status == "cancelled" and slot.kind == "briefing"):
            return "skip"
        home = self.home_slots.get(slot.kind)
        if not (await home.planned(self.core, self.store, slot) if home is not None
                else slot.id in {s.id for s in await self.plans.load_plan(slot.fixture)}):
            return "skip"  # re-timed or cancelled by another replica since we planned it
        state = self._state(slot, fx, now)
        if state == "missed":
            if not await self.plans.claim_missed(slot, self.instance, now):  # claim, record: atomic
                return "skip"  # another replica has it
            metrics.BRIEFINGS.labels(state).inc()
            log.warning("missed %s %s of %s (due %s)", slot.kind, slot.label, fx.id, slot.due)
            return state
        return await self._claim_into_outbox(slot, fx, state, now)

    async def _claim_into_outbox(self, slot: Slot, fx: Fixture, state: str,
                                 now: datetime) -> str:
        """The claim and the outbox entries are one atomic write (where the outbox is in
        the store); the messages are built before the claim, from what was read."""
        if await self.plans.slot_claim(slot):
            return "skip"  # another replica has it (checked first: building it costs)
        home = self.home_slots.get(slot.kind)
        if home is not None:
            sent = await home.send(self.core, self.store, fx, slot, state, self.instance, now)
            if sent is None:
                return "skip"
            await self.core.notifier.send(sent)  # observers (console, replay)
            return state
        late = slot.due if state == "late" else None
        also: list[Op] = []
        if slot.kind == "summary":
            outs = await self.content.summary(self.core, self.store, fx, late)
        else:  # stewards sign off the version sent: it is current from the same write
            outs, version = await self.content.briefing(self.core, self.store, fx, slot.label,
                                                         late)
            also = Stewarding.shown_ops(version, iso(now))
        for out in outs:
            out.fixture = out.fixture or fx.id
        if not await self.plans.claim_slot_with(
                slot, state, self.instance, now, self.core.notifier.outbox.ops(outs) + also):
            return "skip"
        metrics.BRIEFINGS.labels(state).inc()
        await self.core.notifier.send(outs)  # observers (console, replay) see them here
        return state

    # ---------------------------------------------------------------- status
    async def status_lines(self, fx: Fixture) -> list[str]:
        """core.status_lines: briefings and summaries that were missed, e.g. 'Missed briefing:
        T-3h (16:45)'."""
        tz = self.cfg.tz
        return [f"Missed {s.kind}: {s.label} ({s.due.astimezone(tz):%H:%M})"
                for s in await self.plans.missed_slots(fx.id)]
