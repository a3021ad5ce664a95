"""Running the bot: scheduler and adapters on one asyncio loop until told to stop."""

from __future__ import annotations

import asyncio
import logging
import signal
from datetime import datetime

from aiohttp import web

from bot.app import App, StartupError
from bot.delivery.durable import OutboxReader
from bot.delivery.health import status_lines, watch
from bot.delivery.ratelimit import SharedRateLimiter
from bot.schedule.scheduler import Scheduler
from bot.store.outbox import Outbox
from bot.store.windows import Windows

log = logging.getLogger(__name__)


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
        await sweep_retention(core, now)

    scheduler.add_ticker(escalations, 1.0)
    scheduler.add_ticker(retention, 3600.0)
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
                  http: bool = False, console: bool = False) -> int:
    """Start the scheduler and every configured adapter; the console when no tokens are set."""
    from bot.adapters.console import ConsoleAdapter
    from bot.sample import ensure_sample_fixture

    core = app.core
    assert core is not None
    stop = _stop_on_signals()
    scheduler = make_scheduler(app, live=True)
    await scheduler.start()
    try:
        platforms = await _start_platforms(app, webhook=webhook, http=http)
        if core.notifier.sinks:
            start_outbox(app)
        if console or not platforms:
            fx = await ensure_sample_fixture(core)
            print(f"Matchday Ops on {app.settings.redis_url or 'embedded Redis at '}"
                  f"{'' if app.settings.redis_url else app.settings.data_dir / 'redis'}. "
                  f"Fixture: {fx.title} ({fx.id}).")
            adapter = ConsoleAdapter(core, as_role, save_image=_image_saver(app))
            chat = asyncio.create_task(adapter.run())
            stopped = asyncio.create_task(stop.wait())
            await asyncio.wait({chat, stopped}, return_when=asyncio.FIRST_COMPLETED)
            for task in (chat, stopped):
                task.cancel()
        else:
            log.warning("running: %s", ", ".join(platforms))
            await stop.wait()
    finally:
        await scheduler.stop()
        if app.reader is not None:
            await app.reader.stop()
    return 0


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

    def __init__(self, app: web.Application, port: int) -> None:
        self.app, self.port = app, port
        self.runner = web.AppRunner(app)

    async def start(self) -> None:
        """Listen on the port."""
        await self.runner.setup()
        await web.TCPSite(self.runner, "0.0.0.0", self.port).start()

    async def stop(self) -> None:
        """Stop listening."""
        await self.runner.cleanup()


async def _start_platforms(app: App, *, webhook: bool, http: bool) -> list[str]:
    """Start Telegram and/or Slack when their tokens are set; names of what started.

    Raises StartupError with one line when a platform is misconfigured or unreachable."""
    from bot.adapters.slack.adapter import SlackAdapter
    from bot.adapters.telegram.adapter import TelegramStartError, telegram_adapter

    core, settings = app.core, app.settings
    started: list[str] = []
    site = web.Application()
    routes = 0
    try:
        tg = telegram_adapter(core, settings, webhook=webhook)
        if tg is not None:
            if webhook:
                tg.add_routes(site)
                routes += 1
            await tg.start()
            app.adapters.append(tg)
            started.append("telegram webhook /telegram" if webhook else "telegram polling")
        if settings.slack_bot_token is not None:
            slack = SlackAdapter(core, settings)
            if http or settings.slack_app_token is None:
                site.add_routes(slack.routes())
                routes += 1
            await slack.start()
            app.adapters.append(slack)
            started.append("slack socket mode" if settings.slack_app_token and not http
                           else "slack http /slack/events")
    except (TelegramStartError, ValueError) as exc:
        raise StartupError(str(exc)) from None
    if routes:
        server = WebServer(site, settings.port)
        await server.start()
        app.adapters.append(server)
        started.append(f"http :{settings.port}")
    return started
