"""Guided-form feedback: how long from a steward's tap to the next step (and to "Logged")
through the real PTB path, against a bare PTB button handler that edits the same message.

Both run in the same process, same PTB Application, same fake Bot API (real HTTP on
127.0.0.1), fed through `Application.process_update` with instant taps: each tap is sent the
moment the previous step arrived. The bot runs with the delivery layer's shared (Redis)
rate limiter, as in production, on a quiet night (nothing else queued).

    python bench/form_taps.py [--forms N] [--smoke]   (REDIS_URL: use that)

Prints `name: value` lines: tap -> step median/p95 (ms) for the bot and the baseline, the
ratios, and the messages the form sent beside the one it edits (goal: 0).
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from telegram import Update  # noqa: E402
from telegram.ext import ApplicationHandlerStop, CallbackQueryHandler, ContextTypes  # noqa: E402

from bench import cli  # noqa: E402
from bot.app import build_core  # noqa: E402
from bot.delivery.ratelimit import SharedRateLimiter  # noqa: E402
from bot.domain.clock import VirtualClock  # noqa: E402
from bot.embedded_redis.supervisor import EmbeddedRedis  # noqa: E402
from bot.runtime import telegram_for  # noqa: E402
from bot.sample import ensure_sample_fixture  # noqa: E402
from bot.settings import load_settings  # noqa: E402
from bot.store import Store  # noqa: E402
from bot.store.windows import Windows  # noqa: E402
from rigs.fakes.telegram_api import TOKEN, FakeTelegram  # noqa: E402

STEWARD = 100000001
BASE_USER = 100000777  # the baseline's chat (no form there)


async def bare_edit(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """The baseline: answer the tap and edit the tapped message, straight through PTB."""
    q = update.callback_query
    assert q is not None and q.message is not None
    await q.answer()
    await context.bot.edit_message_text(f"step {q.data}", chat_id=q.message.chat.id,
                                        message_id=q.message.message_id)
    raise ApplicationHandlerStop


def pct(values: list[float], q: float) -> float:
    """The q-th percentile (nearest rank), in ms."""
    s = sorted(values)
    return 1000 * s[min(len(s) - 1, max(0, round(q * len(s)) - 1))]


async def run(forms: int, redis_url: str, data_dir: str) -> dict[str, float]:
    fake = FakeTelegram()
    await fake.start()
    settings = load_settings(REDIS_URL=redis_url, MATCHDAY_DATA_DIR=data_dir,
                             TELEGRAM_BOT_TOKEN=TOKEN, TELEGRAM_BASE_URL=fake.base_url,
                             TELEGRAM_WEBHOOK_SECRET="bench")
    store = Store.from_url(redis_url)
    await store.reset_for_tests()
    clock = VirtualClock(datetime(2026, 11, 25, 18, 0, tzinfo=UTC))
    core = build_core(store, settings, clock)
    core.notifier.limiter = SharedRateLimiter(Windows(store.gateway))  # as bot.runtime wires it
    await ensure_sample_fixture(core)
    adapter = telegram_for(core, settings, webhook=True)
    app = adapter.application
    app.add_handler(CallbackQueryHandler(bare_edit, pattern=r"^bare "), group=-1)
    await adapter.start()

    def n_calls() -> int:
        return len(fake.calls)

    async def arrival(start: int, pred: Any) -> tuple[float, Any]:
        """When (monotonic) the first call after index `start` matching pred arrived."""
        hits = await fake.wait_for(lambda c: [x for x in c[start:] if pred(x)], timeout=30)
        return hits[0].at, hits[0]

    def edit_of(chat: int, mid: int, needle: str) -> Any:
        return lambda x: (x.ok and x.method == "editMessageText"
                          and x.params.get("chat_id") == chat
                          and x.params.get("message_id") == mid
                          and needle in str(x.params.get("text")))

    def buttons(msg: dict[str, Any]) -> list[str]:
        rows = msg.get("reply_markup", {}).get("inline_keyboard", [])
        return [b["callback_data"] for row in rows for b in row]

    async def tap(chat: int, mid: int, data: str, needle: str) -> float:
        start = n_calls()
        u = Update.de_json(fake.callback_update(chat, fake.message(chat, mid), data), app.bot)
        t0 = time.monotonic()
        await app.process_update(u)
        at, _ = await arrival(start, edit_of(chat, mid, needle))
        return at - t0

    steps: list[float] = []
    logged: list[float] = []
    extra = 0
    for i in range(forms + 2):  # the first two warm up connections, caches and scripts
        clock.advance(timedelta(minutes=11))  # no merge with the last report
        start = n_calls()
        await app.process_update(Update.de_json(fake.message_update(STEWARD, "/incident"),
                                                app.bot))
        await arrival(start, lambda x: x.ok and x.method == "sendMessage"
                                 and x.params.get("chat_id") == STEWARD)
        mid = max(m for (c, m), x in fake.messages.items()
                  if c == STEWARD and "What is happening?" in x.get("text", ""))
        typ = next(b for b in buttons(fake.message(STEWARD, mid)) if b.endswith("type missile"))
        a = await tap(STEWARD, mid, typ, "Where?")
        loc = buttons(fake.message(STEWARD, mid))[0]
        b = await tap(STEWARD, mid, loc, "How serious?")
        sev = next(x for x in buttons(fake.message(STEWARD, mid)) if x.endswith(" sev 3"))
        c = await tap(STEWARD, mid, sev, "Logged")
        await adapter.drain()
        sends = [x for x in fake.calls[start:] if x.ok and x.method == "sendMessage"
                 and x.params.get("chat_id") == STEWARD]
        if i >= 2:
            steps += [a, b]
            logged.append(c)
            extra += len(sends) - 1  # the form's own message is the one it edits
    base: list[float] = []
    msg = await app.bot.send_message(BASE_USER, "bare")
    for i in range(3 * (forms + 2)):
        t = await tap(BASE_USER, msg.message_id, f"bare {i}", f"step bare {i}")
        if i >= 6:
            base.append(t)
    await adapter.stop()
    await store.close()
    await fake.stop()
    everything = steps + logged
    return {
        "forms": forms,
        "tap_to_step_median_ms": round(pct(steps, 0.5), 1),
        "tap_to_step_p95_ms": round(pct(everything, 0.95), 1),
        "tap_to_logged_median_ms": round(pct(logged, 0.5), 1),
        "baseline_tap_to_edit_median_ms": round(pct(base, 0.5), 1),
        "baseline_tap_to_edit_p95_ms": round(pct(base, 0.95), 1),
        "ratio_step_median_vs_bare_edit": round(statistics.median(steps) /
                                                statistics.median(base), 2),
        "ratio_step_p95_vs_bare_edit": round(pct(everything, 0.95) / pct(base, 0.95), 2),
        "extra_messages_per_form": round(extra / forms, 2),
    }


def main() -> None:
    """Run the benchmark and print its figures."""
    ap = cli.parser(__doc__)
    ap.add_argument("--forms", type=int, default=10)
    args = cli.parse(ap, {"forms": 2})
    with tempfile.TemporaryDirectory() as tmp:
        url = os.environ.get("REDIS_URL")
        server = None
        if not url:
            server = EmbeddedRedis(Path(tmp) / "redis", persistent=False)
            url = server.start()
        try:
            figures = asyncio.run(run(args.forms, url, str(Path(tmp) / "data")))
        finally:
            if server is not None:
                server.stop()
    for k, v in figures.items():
        print(f"{k}: {v}")


if __name__ == "__main__":
    main()
