"""Running the bot: scheduler and adapters on one asyncio loop until told to stop."""

from __future__ import annotations

import asyncio
import logging
import signal
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from bot.app import App, StartupError, safe_url
from bot.core.dispatch import Core
from bot.delivery.chat_health import status_lines, watch
from bot.delivery.durable import OutboxReader
from bot.domain.clock import Clock, VirtualClock
from bot.domain.messages import Outbound
from bot.domain.outbox_lag import OutboxLag
from bot.domain.routes import Route
from bot.observe import metrics
from bot.observe.lag_alarm import LagAlarm, lag_reply
from bot.schedule.scheduler import Scheduler
from bot.settings import Settings
from bot.store import StoreUnavailable
from bot.store.lease import Lease
from bot.store.outbox import Outbox
from bot.tasks import cancel_and_wait

if TYPE_CHECKING:  # the platform SDKs are imported only when a token asks for them
    from bot.adapters.console import ConsoleAdapter
    from bot.adapters.parts import AdapterParts
    from bot.adapters.slack.slack_adapter import SlackAdapter
    from bot.adapters.telegram.telegram_adapter import TelegramAdapter
    from bot.schedule.early_warning_feed import EarlyWarning
    from bot.web.ingress_route import IngressFeed
    from bot.web.server import ControlRoom

log = logging.getLogger(__name__)
T = TypeVar("T")


def scheduler_for(core: Core, clock: Clock, *, live: bool) -> Scheduler:
    """A scheduler handed the incident log and the plans facade it uses, what briefings say
    and the slots the homes plan themselves (the roll call)."""
    import handlers

    virtual = clock if isinstance(clock, VirtualClock) else None  # run_due moves it
    return Scheduler(core, core.store, core.facades.plans, handlers.BRIEFING_CONTENT,
                     clock=clock, live=live, virtual=virtual, home_slots=handlers.SLOTS)


def early_warning_for(core: Core) -> EarlyWarning:
    """The early-warning follower handed the incident log and the web state's feed."""
    from bot.schedule.early_warning_feed import EarlyWarning

    return EarlyWarning.of(core, core.store, core.facades.web.feed)


def ingress_feed_for(core: Core) -> IngressFeed:
    """The turnstile feed's route, with its desk and the key from the settings."""
    from bot.ingress.ingress_desk import IngressDesk
    from bot.web.ingress_route import IngressFeed

    key = core.settings.ingress_key
    return IngressFeed(IngressDesk(core, key.get_secret_value().encode() if key else None))


def control_room_for(core: Core, public_url: str | None = None, prefix: str = "") -> ControlRoom:
    """The control-room web view handed the incident log and the web state it uses; with a
    `prefix` (a club's /c/<club>) its links and session cookie stay under it."""
    from bot.web.server import ControlRoom  # HTTP modes only pay for aiohttp

    room = ControlRoom(core, core.store, core.facades.web, public_url,
                       facades=core.facades, prefix=prefix)
    core.hooks.append(room.live.on_change)  # the wall's ingress tile follows its figures
    return room


def make_scheduler(app: App, *, live: bool) -> Scheduler:
    """The app's one scheduler with every periodic sweep registered."""
    from bot.schedule.retention import sweep_retention
    from handlers import sweep_escalations

    core = app.core
    assert core is not None
    scheduler = scheduler_for(core, app.clock, live=live)

    async def escalations(now: datetime) -> None:
        await sweep_escalations(core, core.store, now)

    async def retention(now: datetime) -> None:
        if app.lease is None or app.lease.held:  # a singleton duty: the lease holder's
            await sweep_retention(core, core.store, core.facades.police, now)

    warnings = early_warning_for(core)
    from bot.domain.ingress_model import readings
    from bot.ingress.ingress_desk import IngressDesk

    turnstiles = IngressDesk(core)

    async def early_warning(_now: datetime) -> None:
        await warnings.sweep()

    async def ingress(now: datetime) -> None:
        # alerts on the clock, not only when a batch comes (a stalled bank may send nothing);
        # the wall's tile told when its figures change; the early warning's readings
        p = await turnstiles.tick(now)
        if p is not None and (got := readings(p)):
            await warnings.ingress(got)

    async def martyns_law(now: datetime) -> None:
        from bot.publicprotection.revision_reminder import remind_due

        if app.lease is None or app.lease.held:  # a singleton duty, as retention
            await remind_due(core, core.store, core.facades, now)

    attach_scheduler(core, scheduler)
    scheduler.add_ticker(escalations, 1.0)
    scheduler.add_ticker(martyns_law, 3600.0)
    scheduler.add_ticker(early_warning, 2.0)
    scheduler.add_ticker(ingress, 1.0)
    scheduler.add_ticker(retention, 3600.0)
    if app.settings.clock_file is not None:  # virtual time moves in jumps: look often
        async def virtual_time(now: datetime) -> None:
            await scheduler.catch_up(now)
            await sweep_escalations(core, core.store, now)

        scheduler.add_ticker(virtual_time, 0.1)
    return scheduler


def attach_scheduler(core: Core, scheduler: Scheduler) -> Scheduler:
    """The scheduler re-plans when a fixture changes and adds its lines to /status."""
    core.hooks.append(scheduler.on_change)
    core.status_lines.append(scheduler.status_lines)
    return scheduler


def adapter_parts(core: Core) -> AdapterParts:
    """What a platform adapter uses besides the core's narrow face (CoreAPI)."""
    from bot.adapters.parts import AdapterParts

    return AdapterParts(delivery=core.notifier, audit=core.facades.audit,
                        platform=core.facades.platform, clock=core.clock,
                        outage=core.outage, registry=core.registry, roles=core.roles,
                        roster=core.roster, grounds=core.grounds)


def telegram_for(core: Core, settings: Settings, **options: Any) -> TelegramAdapter:
    """The Telegram adapter, its sink delivering for the core, its chat moves in /status."""
    from bot.adapters.telegram.telegram_adapter import TelegramAdapter

    tg = TelegramAdapter(core, adapter_parts(core), settings, **options)
    core.notifier.add_sink(tg.sink)
    core.status_lines.append(tg.migrations.status_lines)
    return tg


def slack_for(core: Core, settings: Settings, **options: Any) -> SlackAdapter:
    """The Slack adapter, delivering for the core, its Home tabs following changes."""
    from bot.adapters.slack.slack_adapter import SlackAdapter

    slack = SlackAdapter(core, adapter_parts(core), settings, **options)
    core.notifier.add_sink(slack)
    core.hooks.append(slack.home.on_change)
    return slack


def console_for(core: Core, as_role: str, **options: Any) -> ConsoleAdapter:
    """The console chat, shown every broadcast as it goes out."""
    from bot.adapters.console import ConsoleAdapter

    console = ConsoleAdapter(core, as_role, **options)
    core.notifier.taps.append(console.tap)
    return console


def stop_on_signals() -> asyncio.Event:
    """An event set by SIGINT/SIGTERM (installed before anything is announced)."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            loop.add_signal_handler(sig, stop.set)
        except (NotImplementedError, RuntimeError):  # not on this platform/thread
            pass
    return stop


async def run_bot(app: App, *, as_role: str = "control", webhook: bool = False,
                  http: bool = False, console: bool = False, web: bool = False) -> int:
    """Start the scheduler and every configured adapter; the console when no tokens are set.

    The control-room web view is on with `web`, `http` or `webhook`; those run headless
    (no console) when no platform token is set, unless `console` asks for it."""
    from bot.sample import ensure_sample_fixture

    core = app.core
    assert core is not None and app.lease is not None, "run_bot needs App(serving=True) started"
    code = 0
    stop = stop_on_signals()
    await app.check_durability()  # one line (or a refusal) before anyone is answered
    metrics.LEADER.labels(app.club).set(1 if await app.lease.tick() else 0)
    scheduler = make_scheduler(app, live=True)
    watchdog = asyncio.create_task(app.watchdog()) if app.embedded is not None else None
    durable = isinstance(core.notifier.outbox, Outbox)  # build_core(durable=True)
    alarm = lag_alarm(core, leads(app)) if durable else None  # the lag's, in /healthz too
    async with AsyncExitStack() as running:
        # on a stop before the duties began (they do the same, in order, once begun)
        running.push_async_callback(cancel_and_wait, [watchdog])
        running.push_async_callback(app.lease.release)
        running.push_async_callback(scheduler.stop)
        started = await _unless_stopped(stop, _start_platforms(
            app, webhook=webhook, http=http, control_room=web or http or webhook,
            alarm=alarm))
        if started is None:  # SIGTERM during start-up (e.g. a platform still unreachable)
            return 0
        platforms, pollers = started
        await running.enter_async_context(duties(app, scheduler, pollers, alarm))
        chats = [p for p in platforms if p.startswith(("telegram", "slack"))]
        adapter = None
        if console or not (chats or http or web or webhook):
            fx = await ensure_sample_fixture(core, rota=True)
            where = (safe_url(app.settings.redis_url or "") if app.embedded is None else
                     f"embedded Redis at {app.embedded.data_dir} (server {app.embedded.binary})")
            print(f"Matchday Ops on {where}. Fixture: {fx.title} ({fx.id}).")
            adapter = console_for(core, as_role, save_image=_image_saver(app))
        # Every output is registered now: only then catch up on briefings and summaries that
        # fell due while the bot was down, so a late one reaches someone.
        await scheduler.start()
        if adapter is not None:
            chat = asyncio.create_task(adapter.run())
            stopped = asyncio.create_task(stop.wait())
            await asyncio.wait({chat, stopped}, return_when=asyncio.FIRST_COMPLETED)
            for task in (chat, stopped):
                task.cancel()
            if chat.done() and not chat.cancelled() and chat.exception() is not None:
                # the console died under the user: say so and exit non-zero, not quietly 0
                log.error("the console chat stopped: %s", chat.exception(),
                          exc_info=chat.exception())
                code = 1
        else:  # with --http/--web and no tokens: headless, stdin ignored
            if app.embedded is not None:
                platforms.append(f"embedded Redis {app.embedded.binary}")
            log.warning("running: %s", ", ".join(platforms if chats else
                                                  ["headless", *platforms]))
            await stop.wait()
    return code


@asynccontextmanager
async def duties(app: App, scheduler: Scheduler, pollers: list[tuple[Lease, Polling]],
                 alarm: LagAlarm | None) -> AsyncIterator[None]:
    """The background duties of a started core while the block runs: the outbox reader and
    its watches (with `alarm`, a durable outbox), the singleton lease, each bot's polling
    lease, other replicas' changes and unsure writes; after it, all stopped (the scheduler
    first, before the leases are given up) and the leases given up."""
    core, lease = app.core, app.lease
    assert core is not None and lease is not None
    reader: OutboxReader | None = None
    background: list[asyncio.Task[None]] = []
    try:
        if alarm is not None:
            reader = start_outbox(core)
            background += [asyncio.create_task(
                watch(core.notifier, float(app.settings.delivery_warn_seconds))),
                asyncio.create_task(alarm.run())]
        background += [asyncio.create_task(_keep_lease(lease, app.club)),
                       *(asyncio.create_task(_keep_polling(own, poller))
                         for own, poller in pollers),
                       asyncio.create_task(follow_changes(core, app.origin)),
                       asyncio.create_task(share_unsure(core))]
        yield
    finally:
        await cancel_and_wait(background)
        await scheduler.stop()
        if reader is not None:
            await reader.stop()
        for own, _ in pollers:
            await own.release()
        await lease.release()


async def _unless_stopped(stop: asyncio.Event, work: Awaitable[T]) -> T | None:
    """The result of `work`, or None (work cancelled) if `stop` is set first."""
    task = asyncio.ensure_future(work)
    waiter = asyncio.create_task(stop.wait())
    await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
    waiter.cancel()
    if task.done():
        return task.result()
    await cancel_and_wait([task])
    return None


async def _keep_lease(lease: Lease, club: str = "") -> None:
    """Renew the singleton lease (the deployment's, or a club's, singleton duties; Telegram
    polling follows its own lease, see _keep_polling)."""
    async def changed(held: bool) -> None:
        log.warning("this replica is now the %s%s", "leader" if held else "standby",
                    f" of club {club}" if club else "")
        metrics.LEADER.labels(club).set(1 if held else 0)
    await _hold(lease, changed)


async def _keep_polling(lease: Lease, poller: Polling) -> None:
    """Hold a Telegram bot's polling lease (its own slot, see bot.store.lease.polling):
    poll while it is held, stop polling when it is lost."""
    async def changed(held: bool) -> None:
        log.warning("this replica %s Telegram polling", "now runs" if held else "stopped")
        await (poller.start_polling() if held else poller.stop_polling())
    if await lease.tick():
        await changed(True)
    await _hold(lease, changed)


async def _hold(lease: Lease, changed: Callable[[bool], Awaitable[None]]) -> None:
    """Tick a lease at its pace for ever; `changed(held)` each time holding it changes."""
    was = lease.held
    while True:
        await asyncio.sleep(lease.next_tick_s())
        held = await lease.tick()
        if held != was:
            await changed(held)
        was = held


class Polling(Protocol):
    """A platform that fetches its updates, one replica at a time (the holder of its own
    polling lease)."""

    async def start_polling(self) -> None: ...

    async def stop_polling(self) -> None: ...


async def follow_changes(core: Core, origin: str) -> None:
    """Drop cached fixture state when another replica changes it (Redis pub/sub); learn of
    other replicas' NOT CONFIRMED writes (said on the channel, or before we listened)."""
    while True:
        try:
            async for what, fixture, sender in core.facades.changes.changes(core.learn_unsure):
                if sender != origin:
                    await core.changed(what, fixture, here=False)
        except StoreUnavailable:
            await asyncio.sleep(1)  # Redis is away; subscribe again when it is back
        except Exception:
            log.exception("following other replicas' changes failed; resubscribing")
            await asyncio.sleep(1)


async def share_unsure(core: Core, every_s: float = 1.0) -> None:
    """Write NOT CONFIRMED commands through to the store once it answers again, when no
    command on this replica has done it yet (a quiet replica)."""
    while True:
        await asyncio.sleep(every_s)
        if core.unsure.pending:
            try:
                await core.share_unsure()
            except Exception:
                log.exception("sharing NOT CONFIRMED writes with other replicas failed")


def _waited(entry_id: str, now: float) -> float:
    """Seconds from when an outbox entry was written (a stream id starts with its time in
    ms) to wall time `now`."""
    return now - int(entry_id.split("-")[0]) / 1000


def outbox_lag(core: Core) -> Callable[[], Awaitable[float]]:
    """/healthz's probe: seconds the oldest undelivered outbox entry (any fixture) has waited."""
    outbox = core.facades.delivery.outbox  # the durable one, durable core or not

    async def lag() -> float:
        ages = [0.0]
        for fx in await outbox.fixture_ids():
            n, first = await outbox.backlog(fx)
            if n and first:
                ages.append(_waited(first, time.time()))
        return round(max(ages), 3)
    return lag


# A fixture whose outbox delivered nothing for this long while its oldest entry waits is not
# going out. One that keeps delivering while an old entry waits its turn at a platform's
# limit (a flashpoint's actionable cards, one every 3 s to a Telegram group, for minutes) is
# behind but moving: the 80-fixture Saturday raised the alarm at 47 s with nothing stuck.
QUIET_S = 30.0


def outbox_stalled(core: Core, quiet_s: float = QUIET_S,
                   wall: Callable[[], float] = time.time) -> Callable[[], Awaitable[float]]:
    """The lag alarm's probe: seconds the oldest undelivered entry has waited, among the
    fixtures whose outbox has delivered nothing for `quiet_s` (or not since first looked
    at: a fixture is not assumed to be moving before it is seen to move)."""
    outbox = core.facades.delivery.outbox
    moved: dict[str, tuple[int, float]] = {}  # fixture -> (entries gone, when that changed)

    async def stalled() -> float:
        ages, now = [0.0], time.monotonic()
        for fx in await outbox.fixture_ids():
            waiting, first, gone = await outbox.flow(fx)
            last = moved.get(fx)
            if last is None:
                moved[fx] = (gone, float("-inf"))
            elif gone != last[0]:
                moved[fx] = (gone, now)
            if waiting and first and now - moved[fx][1] >= quiet_s:
                ages.append(_waited(first, wall()))
        return round(max(ages), 3)
    return stalled


def lag_alarm(core: Core, leads: Callable[[], bool] = lambda: True,
              wall: Callable[[], float] = time.time) -> LagAlarm:
    """The outbox lag's alarm: control is told through the in-memory path, which does not
    wait on the outbox that is falling behind, by the replica that `leads` only (every
    replica samples the same lag and logs it: control gets it once, not once a replica)."""
    notifier = core.notifier

    async def tell(notice: OutboxLag) -> None:
        if leads():
            await notifier.send([Outbound("control", lag_reply(notice))])
    return LagAlarm(outbox_stalled(core, wall=wall), tell)


def leads(app: App) -> Callable[[], bool]:
    """Whether this replica holds the app's singleton lease now (a lone bot always does)."""
    return lambda: app.lease is None or app.lease.held


def start_outbox(core: Core) -> OutboxReader:
    """Start delivering what commands caused from the outbox (a durable core's)."""
    outbox = core.notifier.outbox
    assert isinstance(outbox, Outbox), "build_core(..., durable=True)"
    reader = OutboxReader(core.notifier, outbox)
    reader.start()
    notifier = core.notifier

    async def delivery_lines(_fx: object) -> list[str]:
        return status_lines(notifier)

    core.status_lines.append(delivery_lines)
    return reader


def _image_saver(app: App):  # type: ignore[no-untyped-def]
    from itertools import count

    n = count(1)
    out = app.settings.data_dir / "charts"

    def save(png: bytes):  # type: ignore[no-untyped-def]
        out.mkdir(parents=True, exist_ok=True)
        path = out / f"chart-{next(n)}.png"
        path.write_bytes(png)
        return path

    return save


OWN_VOICE = object()  # start_chats: Telegram's bot makes its own transcriber


async def _start_platforms(app: App, *, webhook: bool, http: bool, control_room: bool = False,
                           alarm: LagAlarm | None = None
                           ) -> tuple[list[str], list[tuple[Lease, Polling]]]:
    """Start Telegram and/or Slack when their tokens are set; names of what started, and
    what polls with the lease it polls under (only its holder polls, see _keep_polling).

    Raises StartupError with one line when a platform is misconfigured or unreachable."""
    settings = app.settings
    if settings.telegram_bot_token is None and settings.slack_bot_token is None \
            and not control_room:
        return [], []
    started, pollers, routes = await start_chats(app, webhook=webhook, http=http)
    if routes or http or webhook or control_room:
        from bot.web.host import HttpHost

        site = http_site(app, routes, control_room=control_room, alarm=alarm)
        if control_room:
            started.append(f"control room {settings.web_base}/control/")
        server = HttpHost(site, settings.port, settings.bind)
        await server.start()
        app.adapters.append(server)
        started.append(f"http {settings.bind}:{settings.port}")
    return started, pollers


async def start_chats(app: App, *, webhook: bool, http: bool, voice: Any = OWN_VOICE
                      ) -> tuple[list[str], list[tuple[Lease, Polling]], list[Route]]:
    """Start Telegram and/or Slack when their tokens are set: what started, what polls (with
    its lease) and the HTTP routes they answer on. `voice`: a transcriber shared with other
    clubs' bots (or None), else Telegram gets its own. StartupError with one line when a
    platform is misconfigured or unreachable."""
    core, settings = app.core, app.settings
    assert core is not None
    if settings.slack_bot_token is not None:  # before anything starts: no half-started bot
        from bot.adapters.slack.slack_adapter import check_http

        try:
            check_http(settings, http)
        except ValueError as exc:
            raise StartupError(str(exc)) from None
    started: list[str] = []
    pollers: list[tuple[Lease, Polling]] = []
    routes: list[Route] = []
    errors: tuple[type[Exception], ...] = (ValueError,)
    try:
        if settings.telegram_bot_token is not None:
            from bot.adapters.telegram.telegram_adapter import TelegramStartError

            errors = (TelegramStartError, ValueError)
            from bot.voice.model import ModelError
            from bot.voice.pool import transcriber_for
            from bot.voice.suggest import prompt_for

            if voice is OWN_VOICE:
                try:
                    voice = transcriber_for(settings.stt_model,
                                            prompt_for(list(core.grounds.values())),
                                            data_dir=settings.data_dir,
                                            workers=settings.stt_workers,
                                            queue=settings.stt_queue,
                                            max_s=settings.stt_max_seconds)
                except ModelError as exc:
                    raise StartupError(f"voice notes: {exc}") from None
            tg = telegram_for(core, settings, webhook=webhook, voice=voice)
            if webhook:
                routes += tg.routes()
            else:  # one getUpdates consumer per token: the holder of the bot's polling lease,
                # in the bot's own slot (not the singleton's {ops}); run_bot starts it
                pollers.append((core.facades.platform.polling(tg.bot_id, app.origin,
                                                              settings.lease_ms),
                                tg))
            await tg.start(poll=webhook)
            app.adapters.append(tg)
            started.append("telegram webhook /telegram" if webhook else "telegram polling")
        if settings.slack_bot_token is not None:
            from bot.adapters.slack.slack_adapter import serves_http

            # Home tabs are refreshed by one replica: the lease holder (a singleton duty).
            slack = slack_for(core, settings, leader=lambda: app.role() == "leader")
            if serves_http(settings, http):
                routes += slack.routes()
            await slack.start()
            app.adapters.append(slack)
            started.append("slack socket mode" if settings.slack_app_token and not http
                           else "slack http /slack/events")
    except errors as exc:
        raise StartupError(str(exc)) from None
    return started, pollers, routes


def http_site(app: App, routes: list[Route], *, control_room: bool,
              alarm: LagAlarm | None = None, prefix: str = "") -> Any:
    """The aiohttp application of one core: its chat routes, /healthz and /metrics, the
    ingress feed and (with `control_room`) the control-room web view; `prefix`: the path a
    club's site is mounted under (its control room's links keep to it)."""
    from bot.observe.endpoints import health_routes
    from bot.web.host import application  # HTTP modes only pay for aiohttp

    core = app.core
    assert core is not None
    site = application(routes + health_routes(
        core.store.gateway.ping, app.role, outbox_lag(core),
        lag_alarm=(lambda: alarm.raised) if alarm is not None else None, club=app.club))
    ingress_feed_for(core).add_routes(site)  # refuses every batch until a key is set
    if control_room:
        control_room_for(core, app.settings.public_url, prefix).add_routes(site)
    return site
