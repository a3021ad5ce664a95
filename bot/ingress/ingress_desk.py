"""The ingress desk: takes batches of counts (signed HTTP, console, drills), counts each batch
once, and tells control and command about every alert the picture calls for, once."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from bot.core.dispatch import Core
from bot.domain.clock import iso
from bot.domain.crowd_signals import IngressReading
from bot.domain.fixture.fixture_model import Fixture
from bot.domain.grounds import Ground
from bot.domain.ingress_batch import Batch, BatchRefused, parse_batch, signed
from bot.domain.ingress_model import IngressAlert, Picture, alerts, picture, readings
from bot.domain.ingress_plan import IngressPlan
from bot.domain.ledger import Event
from bot.domain.messages import Outbound, Reply
from bot.ingress.ingress_text import TITLES, alert_text

AUDIENCES = ("control", "command")
SYSTEM = "system:ingress"
CHECK_S = 1.0  # the picture is checked for alerts at most this often per fixture


@dataclass(frozen=True)
class Counted:
    """A batch counted: how many readings and people, and the alerts it set off."""

    batch: str
    readings: int
    people: int
    duplicate: bool = False
    alerts: tuple[IngressAlert, ...] = ()


def ground_of(core: Core, fx: Fixture) -> Ground:
    """The fixture's ground (the first one when it names none)."""
    return core.grounds.get(fx.ground) or next(iter(core.grounds.values()))


@dataclass
class IngressDesk:
    """One per process; `key` is the feed's HMAC key (None: the HTTP feed is refused)."""

    core: Core
    key: bytes | None = None
    checked: dict[str, float] = field(default_factory=dict)  # fixture -> last check (epoch)
    sent: set[str] = field(default_factory=set)  # alerts this process has seen logged
    shown: dict[str, tuple[object, ...]] = field(default_factory=dict)  # fixture -> figures

    def plan_of(self, fx: Fixture) -> IngressPlan | None:
        """The ingress plan of the fixture's ground."""
        return ground_of(self.core, fx).ingress

    async def receive(self, body: bytes, signature: str) -> Counted | BatchRefused:
        """A batch from the HTTP feed: signature, then shape, then counted once."""
        if self.key is None:
            return BatchRefused("the ingress feed is off: no MATCHDAY_INGRESS_KEY is set", 503)
        if not signature or not signed(self.key, body, signature):
            return BatchRefused("signature missing or wrong (X-Ingress-Signature: sha256=<HMAC "
                                "of the body>): not counted", 401)
        fx = await self.core.active_fixture()
        if fx is None:
            return BatchRefused("no fixture is active: not counted", 409)
        plan = self.plan_of(fx)
        if plan is None:
            return BatchRefused(f"ground {fx.ground!r} has no [ingress] plan: not counted", 409)
        got = parse_batch(body, plan, self.core.clock.now())
        if isinstance(got, BatchRefused):
            return got
        return await self.take(fx, got)

    async def take(self, fx: Fixture, batch: Batch) -> Counted | BatchRefused:
        """Count a checked batch once, then check the picture for alerts."""
        now = self.core.clock.now()
        applied = await self.core.facades.ingress.count(fx.id, batch, iso(now))
        if applied.duplicate:
            return BatchRefused(f"batch {batch.id} was counted already: not counted again", 409)
        # the wall's tile follows on the timer (tick), when its figures change: not per batch
        raised = await self.check(fx, now)
        return Counted(batch.id, len(batch.readings), batch.people, alerts=tuple(raised))

    async def tick(self, now: datetime) -> Picture | None:
        """The timer (the scheduler's tick): the active fixture's alerts, sent even when no
        batch comes at all (a stalled bank); the wall told when the figures changed."""
        fx = await self.core.active_fixture()
        if fx is None or self.plan_of(fx) is None:
            return None
        self.checked[fx.id] = now.timestamp()
        p = await self.picture(fx, now)
        if p is None:
            return None
        await self._alert(fx, p)
        shown = figures(p)
        if self.shown.get(fx.id) != shown:
            self.shown[fx.id] = shown
            await self.core.changed("ingress", fx.id)
        return p

    async def picture(self, fx: Fixture, now: datetime | None = None) -> Picture | None:
        """Every stand's figures now (None when the ground has no ingress plan)."""
        plan = self.plan_of(fx)
        if plan is None:
            return None
        at = now or self.core.clock.now()
        counts = await self.core.facades.ingress.read(fx.id, list(plan.entries), at.timestamp())
        return picture(plan, counts, fx.kickoff)

    async def readings(self, fx: Fixture) -> list[IngressReading]:
        """The current reading per stand and entry point (the early warning's input)."""
        p = await self.picture(fx)
        return readings(p) if p is not None else []

    async def check(self, fx: Fixture, now: datetime, *, force: bool = False) -> list[IngressAlert]:
        """Send each alert the picture calls for that nobody has sent yet."""
        ts = now.timestamp()
        if not force and ts - self.checked.get(fx.id, float("-inf")) < CHECK_S:
            return []
        self.checked[fx.id] = ts
        p = await self.picture(fx, now)
        return [] if p is None else await self._alert(fx, p)

    async def _alert(self, fx: Fixture, p: Picture) -> list[IngressAlert]:
        plan = self.plan_of(fx)
        if plan is None:
            return []
        out = []
        for a in alerts(plan, p):
            once = f"ingress:{fx.id}:{a.kind}:{a.zone}:{a.level}"
            if once in self.sent:
                continue
            if await self.send(fx, a, once):
                out.append(a)
            self.sent.add(once)  # sent here or by another replica: either way, once
        return out

    async def send(self, fx: Fixture, a: IngressAlert, once: str) -> bool:
        """Log the alert and send it to control and command, once across replicas."""
        ground = ground_of(self.core, fx)
        text = alert_text(a, ground, self.core.settings.zone)
        ev = Event(kind="ingress.alert", at=iso(a.at), by=SYSTEM, role="system",
                   data={"alert": a.kind, "zone": a.zone, "level": a.level,
                         "inside": a.inside, "capacity": a.capacity,
                         "rate_per_min": round(a.rate_per_min, 1), "limit": round(a.limit, 1),
                         "close": list(a.close), "text": text})
        reply = Reply(text, title=TITLES[a.kind])
        outs = [Outbound(aud, reply, fixture=fx.id) for aud in AUDIENCES]
        store = self.core.store
        if not await store.log_once(fx.id, ev, self.core.notifier.outbox.ops(outs), once):
            return False
        await self.core.notifier.send(outs)
        await self.core.changed("ingress", fx.id)
        return True


def figures(p: Picture) -> tuple[object, ...]:
    """What the wall's ingress tile shows of a picture (it is redrawn when these change)."""
    return tuple((s.zone, s.inside, round(s.rate_per_min), s.pressure, s.in_by_kickoff,
                  None if s.full_at is None else s.full_at.replace(second=0, microsecond=0))
                 for s in p.stands)
