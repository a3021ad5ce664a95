"""Updates/s of a one-line incident report through the Telegram path, against an echo handler.

Both run in the same PTB Application, same run, same fake Bot API (real HTTP on 127.0.0.1),
fed through `Application.process_update`. A report is: core (member, fixture, one Lua write),
the reply to the steward, and the control/command cards (sent and their refs stored) -- all
delivered before the clock stops. Echo is: one sendMessage.

    python bench/telegram_path.py [N] [--latency-ms MS] [--inproc] [--smoke]   (REDIS_URL: use that)

The fake Bot API runs in its own process (like the real server, its CPU is not ours);
--inproc runs it on the bot's loop instead. --latency-ms adds simulated network time per
call. Reports are 11 virtual minutes apart so none is offered as a merge with the last.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from telegram import Update  # noqa: E402
from telegram.ext import (  # noqa: E402
    AIORateLimiter,
    ApplicationHandlerStop,
    ContextTypes,
    MessageHandler,
    filters,
)

from bench import cli  # noqa: E402
from bot.app import build_core  # noqa: E402
from bot.delivery.ratelimit import unlimited  # noqa: E402
from bot.domain.clock import VirtualClock  # noqa: E402
from bot.embedded_redis.supervisor import EmbeddedRedis  # noqa: E402
from bot.runtime import telegram_for  # noqa: E402
from bot.sample import ensure_sample_fixture  # noqa: E402
from bot.settings import load_settings  # noqa: E402
from bot.store import Store  # noqa: E402
from rigs.fakes.telegram_api import TOKEN, FakeTelegram  # noqa: E402

STEWARD = 100000001
ROUNDS = 3


async def echo(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """The baseline: answer a message with its own text."""
    assert update.message is not None
    await context.bot.send_message(update.message.chat_id, update.message.text or "")
    raise ApplicationHandlerStop


async def run(n: int, redis_url: str, data_dir: str, api_url: str | None) -> dict[str, float]:
    fake = FakeTelegram()  # builds the updates; serves too when running in-process
    if api_url is None:
        api_url = await fake.start()
    settings = load_settings(REDIS_URL=redis_url, MATCHDAY_DATA_DIR=data_dir,
                             TELEGRAM_BOT_TOKEN=TOKEN, TELEGRAM_BASE_URL=api_url,
                             TELEGRAM_WEBHOOK_SECRET="bench")
    store = Store.from_url(redis_url)
    await store.reset_for_tests()
    clock = VirtualClock(datetime(2026, 11, 25, 18, 0, tzinfo=UTC))
    core = build_core(store, settings, clock)
    core.notifier.limiter = unlimited()  # the notifier's per-chat Telegram limits: off too
    await ensure_sample_fixture(core)
    # Rate limits off: this measures our path, not Telegram's 30 msg/s allowance.
    adapter = telegram_for(core, settings, webhook=True,
                              rate_limiter=AIORateLimiter(overall_max_rate=0, group_max_rate=0,
                                                          max_retries=0))
    app = adapter.application
    app.add_handler(MessageHandler(filters.Regex(r"^echo "), echo), group=-1)
    await adapter.start()

    def batch(text: str, count: int) -> list[Update]:
        return [Update.de_json(fake.message_update(STEWARD, text.format(i)), app.bot)
                for i in range(count)]

    async def timed(updates: list[Update], tick: bool = False) -> float:
        t0 = time.perf_counter()
        for u in updates:
            if tick:
                clock.advance(timedelta(minutes=11))
            await app.process_update(u)
        await adapter.drain()  # every card delivered and its ref stored
        return time.perf_counter() - t0

    report = "/incident missile @stb_walkway s3 bottles thrown, report {}"
    await timed(batch(report, 20), tick=True)  # warm-up: connections, caches, scripts
    await timed(batch("echo warm {}", 20))
    t_rep = t_echo = 0.0
    for _ in range(ROUNDS):
        t_echo += await timed(batch("echo hello {}", n))
        t_rep += await timed(batch(report, n), tick=True)
    fx = await core.active_fixture()
    assert fx is not None
    logged = (await store.counts(fx.id)).get("inc:total", 0)
    assert logged == 20 + ROUNDS * n, logged
    await adapter.stop()
    await store.close()
    if fake.base_url:
        await fake.stop()
    reports, echoes = ROUNDS * n / t_rep, ROUNDS * n / t_echo
    return {"reports_per_s": reports, "echo_per_s": echoes, "ratio_vs_echo": reports / echoes}


def main() -> None:
    ap = cli.parser(__doc__)
    ap.add_argument("n", type=int, nargs="?", default=300)
    ap.add_argument("--latency-ms", type=float, default=25.0,
                    help="simulated Bot API round trip (api.telegram.org is ~20-50 ms away)")
    ap.add_argument("--inproc", action="store_true")
    args = cli.parse(ap, {"n": 20})
    repo = Path(__file__).resolve().parent.parent
    with tempfile.TemporaryDirectory() as tmp:
        url = os.environ.get("REDIS_URL")
        server = api = None
        if not url:
            server = EmbeddedRedis(Path(tmp) / "redis", persistent=False)
            url = server.start()
        try:
            api_url = None
            if not args.inproc:
                api = subprocess.Popen(
                    [sys.executable, "-m", "rigs.fakes.telegram_api",
                     "--latency-ms", str(args.latency_ms)],
                    cwd=repo, stdout=subprocess.PIPE, text=True)
                assert api.stdout is not None
                api_url = api.stdout.readline().strip()
            figures = asyncio.run(run(args.n, url, tmp, api_url))
        finally:
            if api is not None:
                api.terminate()
                api.wait(10)
            if server is not None:
                server.stop()
    print(f"api_latency_ms: {args.latency_ms:g}")
    for name, value in figures.items():
        print(f"{name}: {value:.2f}")


if __name__ == "__main__":
    main()
