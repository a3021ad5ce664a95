"""Running the bot: scheduler and adapters on one asyncio loop until told to stop."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import socket
import time
import uuid
from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import TYPE_CHECKING, TypeVar

from bot.app import App, StartupError, safe_url
from bot.core.dispatch import Core
from bot.delivery.durable import OutboxReader
from bot.delivery.health import status_lines, watch
from bot.delivery.ratelimit import SharedRateLimiter
from bot.observe import metrics
from bot.schedule.scheduler import Scheduler
from bot.store import StoreUnavailable
from bot.store.lease import Lease
from bot.store.outbox import Outbox
from bot.store.windows import Windows
from bot.tasks import cancel_and_wait

if TYPE_CHECKING:
    from aiohttp import web

log = logging.getLogger(__name__)
T = TypeVar("T")


def make_scheduler(app: App, *, live: bool) -> Scheduler:
    """The app's one scheduler with every periodic sweep registered."""
    from bot.schedule.escalation import sweep_escalations
    from bot.schedule.retention import sweep_retention

    core = app.core
    assert core is not None
    scheduler = Scheduler(core, clock=app.clock, live=live)

    async def escalations(now: datetime) -> None:
        await sweep_escalations(core, now)

    async def retention(now: datetime) -> None:
        if app.lease is None or app.lease.held:  # a singleton duty: the lease holder's
            await sweep_retention(core, now)

    from bot.schedule.early_warning import EarlyWarning

    warnings = EarlyWarning.of(core)

    async def early_warning(_now: datetime) -> None:
        await warnings.sweep()

    scheduler.add_ticker(escalations, 1.0)
    scheduler.add_ticker(early_warning, 2.0)
    scheduler.add_ticker(retention, 3600.0)
    if app.settings.clock_file is not None:  # virtual time moves in jumps: look often
        async def virtual_time(now: datetime) -> None:
            await scheduler.catch_up(now)
            await sweep_escalations(core, now)

        scheduler.add_ticker(virtual_time, 0.1)
    return scheduler


def _stop_on_signals() -> asyncio.Event:
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
    from bot.adapters.console import ConsoleAdapter
    from bot.sample import ensure_sample_fixture

    core = app.core
    assert core is not None
    code = 0
    stop = _stop_on_signals()
    await app.check_durability()  # one line (or a refusal) before anyone is answered
    origin = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"
    app.lease = Lease(core.store, "singleton", origin, app.settings.lease_ms)
    metrics.LEADER.set(1 if await app.lease.tick() else 0)
    core.publish = lambda what, fx: core.store.publish_change(what, fx, origin)
    scheduler = make_scheduler(app, live=True)
    watchdog = asyncio.create_task(app.watchdog()) if app.embedded is not None else None
    background: list[asyncio.Task[None]] = []
    try:
        started = await _unless_stopped(stop, _start_platforms(
            app, webhook=webhook, http=http, control_room=web or http or webhook))
        if started is None:  # SIGTERM during start-up (e.g. a platform still unreachable)
            return 0
        platforms = started
        if core.notifier.sinks:
            start_outbox(app)
        background = [asyncio.create_task(_keep_lease(app)),
                      asyncio.create_task(follow_changes(core, origin)),
                      asyncio.create_task(share_unsure(core))]
        chats = [p for p in platforms if p.startswith(("telegram", "slack"))]
        adapter = None
        if console or not (chats or http or web or webhook):
            fx = await ensure_sample_fixture(core)
            where = (safe_url(app.settings.redis_url or "") if app.embedded is None else
                     f"embedded Redis at {app.embedded.data_dir} (server {app.embedded.binary})")
            print(f"Matchday Ops on {where}. Fixture: {fx.title} ({fx.id}).")
            adapter = ConsoleAdapter(core, as_role, save_image=_image_saver(app))
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
    finally:
        await cancel_and_wait([watchdog, *background])
        await scheduler.stop()
        if app.reader is not None:
            await app.reader.stop()
        await app.lease.release()
    return code


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


async def _keep_lease(app: App) -> None:
    """Renew the singleton lease; start Telegram polling on gaining it, stop on losing it."""
    lease = app.lease
    was = lease.held
    while True:
        await asyncio.sleep(lease.next_tick_s())
        held = await lease.tick()
        if held != was:
            log.warning("this replica is now the %s", "leader" if held else "standby")
            for adapter in app.adapters:
                toggle = getattr(adapter, "start_polling" if held else "stop_polling", None)
                if toggle is not None and getattr(adapter, "polling_mode", False):
                    await toggle()
        metrics.LEADER.set(1 if held else 0)
        was = held


async def follow_changes(core: Core, origin: str) -> None:
    """Drop cached fixture state when another replica changes it (Redis pub/sub); learn of
    other replicas' NOT CONFIRMED writes (said on the channel, or before we listened)."""
    while True:
        try:
            async for what, fixture, sender in core.store.changes(core.learn_unsure):
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


def outbox_lag(core: Core) -> Callable[[], Awaitable[float]]:
    """/healthz's probe: seconds the oldest undelivered outbox entry (any fixture) has waited."""
    outbox = Outbox(core.store)

    async def lag() -> float:
        ages = [0.0]
        for fx in await outbox.fixture_ids():
            n, first = await outbox.backlog(fx)
            if n and first:  # a stream id starts with its time in ms
                ages.append(time.time() - int(first.split("-")[0]) / 1000)
        return round(max(ages), 3)
    return lag


def start_outbox(app: App) -> OutboxReader:
    """Make what commands cause durable (the outbox) and start delivering it."""
    core, store = app.core, app.store
    assert core is not None and store is not None
    outbox = Outbox(store)
    core.notifier.outbox = outbox
    core.notifier.limiter = SharedRateLimiter(Windows(store))  # one budget for all replicas
    app.reader = OutboxReader(core.notifier, outbox)
    app.reader.start()
    notifier = core.notifier

    async def delivery_lines(_fx: object) -> list[str]:
        return status_lines(notifier)

    core.status_lines.append(delivery_lines)
    app.reader.watchdog = asyncio.create_task(
        watch(notifier, float(app.settings.delivery_warn_seconds)))
    return app.reader


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


class WebServer:
    """The one HTTP server for Telegram webhooks and Slack's HTTP mode."""

    platform = "http"

    def __init__(self, app: web.Application, port: int, host: str = "127.0.0.1") -> None:
        from aiohttp import web  # only HTTP modes pay for aiohttp's import

        self.app, self.port, self.host = app, port, host
        self.runner = web.AppRunner(app)

    async def start(self) -> None:
        """Listen on the port."""
        from aiohttp import web

        await self.runner.setup()
        await web.TCPSite(self.runner, self.host, self.port).start()

    async def stop(self) -> None:
        """Stop listening."""
        await self.runner.cleanup()


async def _start_platforms(app: App, *, webhook: bool, http: bool,
                          control_room: bool = False) -> list[str]:
    """Start Telegram and/or Slack when their tokens are set; names of what started.

    Raises StartupError with one line when a platform is misconfigured or unreachable."""
    core, settings = app.core, app.settings
    if settings.telegram_bot_token is None and settings.slack_bot_token is None \
            and not control_room:
        return []
    from aiohttp import web  # the platform SDKs are imported only when a token asks for them

    if settings.slack_bot_token is not None:  # before anything starts: no half-started bot
        from bot.adapters.slack.adapter import check_http

        try:
            check_http(settings, http)
        except ValueError as exc:
            raise StartupError(str(exc)) from None
    started: list[str] = []
    site = web.Application()
    routes = 0
    errors: tuple[type[Exception], ...] = (ValueError,)
    try:
        if settings.telegram_bot_token is not None:
            from bot.adapters.telegram.adapter import TelegramStartError, telegram_adapter

            errors = (TelegramStartError, ValueError)
            tg = telegram_adapter(core, settings, webhook=webhook)
            if tg is not None:
                if webhook:
                    tg.add_routes(site)
                    routes += 1
                tg.polling_mode = not webhook  # type: ignore[attr-defined]
                # polling: one getUpdates consumer per token, so only the lease holder polls
                await tg.start(poll=webhook or app.lease is None or app.lease.held)
                app.adapters.append(tg)
                started.append("telegram webhook /telegram" if webhook else "telegram polling")
        if settings.slack_bot_token is not None:
            from bot.adapters.slack.adapter import SlackAdapter, serves_http

            slack = SlackAdapter(core, settings)
            # Home tabs are refreshed by one replica: the lease holder (a singleton duty).
            slack.home.leader = lambda: app.lease is None or app.lease.held
            if serves_http(settings, http):
                site.add_routes(slack.routes())
                routes += 1
            await slack.start()
            app.adapters.append(slack)
            started.append("slack socket mode" if settings.slack_app_token and not http
                           else "slack http /slack/events")
    except errors as exc:
        raise StartupError(str(exc)) from None
    if control_room:
        from bot.web.server import ControlRoom

        ControlRoom(core, settings.public_url).add_routes(site)
        routes += 1
        started.append(f"control room {settings.web_base}/control/")
    if routes or http or webhook:
        from bot.observe.health import health_routes

        site.add_routes(health_routes(core.store.ping, app.role, outbox_lag(core)))
        server = WebServer(site, settings.port, settings.bind)
        await server.start()
        app.adapters.append(server)
        started.append(f"http {settings.bind}:{settings.port}")
    return started
