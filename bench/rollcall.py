"""Roll call benchmark (issue 24 §2): 1,000 stewards check in (/onpost <post>) spread over a
window, through the real python-telegram-bot path against the fake Bot API (limits enforced),
the durable outbox and the shared rate limiter. Prints `checkin_reply_p95_s` (from the
steward's message reaching the bot's Telegram API to their "On post ✓" answer arriving; goal
<= 2), `recorded` (check-ins in the store, goal 1,000) and `telegram_429`.

The issue asks for 1,000 within 10 minutes; `--minutes` compresses the window (default 1:
ten times the rate asked for).

    .venv/bin/python bench/rollcall.py [--stewards 1000] [--minutes 1] [--smoke]
"""

from __future__ import annotations

import asyncio
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import cli  # noqa: E402
from bench.rig import bench_core  # noqa: E402
from bot.store.stewarding_keys import Stewarding  # noqa: E402
from rigs.fakes.telegram_api import FakeTelegram  # noqa: E402
from rigs.telegram_rig import tabards_on_telegram, telegram_through_outbox  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
FIRST_ID = 600_000_000


def config_with_posts(n: int, into: Path) -> Path:
    """The shipped config with n more posts in the London Stadium's plan."""
    cfg = into / "config"
    shutil.copytree(ROOT / "config", cfg)
    with (cfg / "grounds" / "london_stadium.toml").open("a") as f:
        for i in range(n):
            f.write(f'\n[[post]]\nid = "bench_{i}"\nzone = "stb_upper"\n'
                    f'name = "Bench post {i}"\n')
    return cfg


def percentile(xs: list[float], q: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, int(q * len(s)))] if s else float("nan")


async def run(stewards: int, minutes: float) -> dict[str, float | int]:
    tmp = Path(tempfile.mkdtemp(prefix="md-rollcall-"))
    fake = FakeTelegram(enforce_limits=True, record=True)
    await fake.start()
    cfg = config_with_posts(stewards, tmp)
    async with bench_core(MATCHDAY_CONFIG_DIR=str(cfg)) as (core, _url, _tmp):
        tabards_on_telegram(core, FIRST_ID, 2000, [("steward", "stb_upper")] * stewards)
        pushed: dict[int, float] = {}
        async with telegram_through_outbox(core, fake):
            gap = minutes * 60 / stewards
            t0 = time.monotonic()
            for i in range(stewards):
                wait = t0 + i * gap - time.monotonic()
                if wait > 0:
                    await asyncio.sleep(wait)
                uid = FIRST_ID + i
                await fake.push(fake.message_update(uid, f"/onpost bench_{i}"))
                pushed[uid] = time.monotonic()

            def answered() -> dict[int, float]:
                out: dict[int, float] = {}
                for c in fake.calls:
                    if c.ok and c.method == "sendMessage" and "On post" in \
                            str(c.params.get("text")):
                        out.setdefault(int(c.params["chat_id"]), c.at)
                return out

            await fake.wait_for(lambda _c: len(answered()) >= stewards, timeout=120)
            got = answered()
            fx = await core.active_fixture()
            assert fx is not None
            recorded = len(await Stewarding(core.store.gateway).on_post(fx.id))
        await fake.stop()
    shutil.rmtree(tmp, ignore_errors=True)
    waits = [got[u] - pushed[u] for u in pushed if u in got]
    return {"stewards": stewards, "window_s": round(minutes * 60, 1),
            "checkin_reply_p50_s": round(percentile(waits, 0.5), 3),
            "checkin_reply_p95_s": round(percentile(waits, 0.95), 3),
            "checkin_reply_max_s": round(max(waits), 3), "recorded": recorded,
            "telegram_429": fake.too_many}


def main() -> None:
    ap = cli.parser(__doc__)
    ap.add_argument("--stewards", type=int, default=1000)
    ap.add_argument("--minutes", type=float, default=1.0)
    a = cli.parse(ap, {"stewards": 30, "minutes": 0.05})
    for name, value in asyncio.run(run(a.stewards, a.minutes)).items():
        print(f"{name}: {value}")


if __name__ == "__main__":
    main()
