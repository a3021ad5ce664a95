"""Broadcast benchmark (issue 24 §4): an EVACUATE to 1,000 stewards on the fake Telegram
(which enforces the bot-wide 30/s, 1/s per chat and 20/min per group with 429s), through the
real python-telegram-bot path, the durable outbox and the shared rate limiter in Redis, while
incident reports keep coming in (their cards and answers must wait for the life-safety lane).

Telegram's ~30 messages a second per bot puts a floor of 1,000/30 s under it. Prints
`broadcast_s` (confirm to the last steward's message), `floor_s`, `ratio` (goal <= 1.1),
`telegram_429` (0), `delivered` (1,000), `other_messages_during` (0) and `lane_released`.

    .venv/bin/python bench/broadcast.py [--stewards 1000] [--reports 20] [--latency-ms 20]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pydantic import SecretStr  # noqa: E402

from bench.rig import bench_core  # noqa: E402
from bot.adapters.telegram.adapter import TelegramAdapter  # noqa: E402
from bot.core.roles import Member  # noqa: E402
from bot.delivery.durable import OutboxReader  # noqa: E402
from bot.delivery.ratelimit import SharedRateLimiter  # noqa: E402
from bot.domain.messages import Command  # noqa: E402
from bot.store.outbox import Outbox  # noqa: E402
from bot.store.stewarding import Stewarding  # noqa: E402
from bot.store.windows import Windows  # noqa: E402
from tests.fakes.telegram_api import TOKEN, FakeTelegram  # noqa: E402

FIRST_ID = 500_000_000
ZONES = ("stb_upper", "stb_lower", "gate_away", "gate_a", "bbs_lower", "ws_lower")
PER_SECOND = 30.0


def say(text: str, i: int, user: str = "safety_officer") -> Command:
    return Command("console", user, user, text, f"bench-bc:{i}")


async def run(stewards: int, reports: int, latency: float) -> dict[str, float | int]:
    fake = FakeTelegram(enforce_limits=True, latency=latency)
    await fake.start()
    async with bench_core() as (core, _url, _tmp):
        for who in [w for w, m in core.roster.items() if m.role in ("steward", "supervisor")]:
            core.roster.pop(who)
        for i in range(stewards):
            uid = str(FIRST_ID + i)
            core.roster[f"telegram:{uid}"] = Member("telegram", uid, "steward",
                                                    f"Tabard {1000 + i}", ZONES[i % len(ZONES)])
        settings = core.settings.model_copy(update={
            "telegram_bot_token": SecretStr(TOKEN), "telegram_base_url": fake.base_url})
        adapter = TelegramAdapter(core, settings, poll_timeout=1)
        await adapter.start()
        outbox = Outbox(core.store)
        core.notifier.outbox = outbox
        core.notifier.limiter = SharedRateLimiter(Windows(core.store))
        reader = OutboxReader(core.notifier, outbox, owner="bench", block_ms=100, rescan_s=0.2)
        reader.start()
        try:
            ask = await core.handle(say("/evacuate all fire in the east stand", 1))
            assert ask is not None and ask.reply.ok, ask
            confirm = next(b.command for row in ask.reply.buttons for b in row
                           if "now" in b.label)
            fake.calls.clear()
            t0 = time.monotonic()
            done = await core.handle(say(confirm, 2))
            assert done is not None and done.reply.ok, done.reply.text
            for k in range(reports):  # reports keep coming in during the procedure
                core.clock.advance(timedelta(minutes=11))
                await core.handle(Command("console", "control", "control",
                                          f"/incident missile @stb_walkway s3 bench {k}",
                                          f"bench-inc:{k}"))

            def procedure(c: object) -> bool:
                return "EVACUATE" in str(getattr(c, "params", {}).get("text", ""))

            def steward_sends() -> int:
                return sum(1 for c in fake.calls if c.ok and c.method == "sendMessage"
                           and procedure(c) and int(c.params["chat_id"]) >= FIRST_ID)

            await fake.wait_for(lambda _calls: steward_sends() >= stewards,
                                timeout=stewards / PER_SECOND * 3 + 30)
            elapsed = time.monotonic() - t0
            sends = [c for c in fake.calls if c.ok and c.method.startswith("send")]
            last = max(i for i, c in enumerate(sends) if procedure(c))
            others = sum(1 for c in sends[:last] if not procedure(c))
            await asyncio.wait_for(reader.drain(), 120)
            lane_free = await Stewarding(core.store).lane() is None
        finally:
            await reader.stop()
            await adapter.stop()
            await core.notifier.close()
        await fake.stop()
    floor = stewards / PER_SECOND
    return {"stewards": stewards, "broadcast_s": round(elapsed, 2), "floor_s": round(floor, 2),
            "ratio": round(elapsed / floor, 3), "telegram_429": fake.too_many,
            "delivered": steward_sends(), "other_messages_during": others,
            "lane_released": int(lane_free)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--stewards", type=int, default=1000)
    ap.add_argument("--reports", type=int, default=20)
    ap.add_argument("--latency-ms", type=float, default=20.0)
    a = ap.parse_args()
    figures = asyncio.run(run(a.stewards, a.reports, a.latency_ms / 1000))
    for name, value in figures.items():
        print(f"{name}: {value}")


if __name__ == "__main__":
    main()
