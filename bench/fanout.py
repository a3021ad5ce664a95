"""Fan-out benchmark: a post-match summary (text + chart) to 40 Telegram group chats through
the rate-limited Notifier, against a local fake Bot API (aiohttp on 127.0.0.1), real clock.

Telegram allows ~30 messages/s per bot, 1/s per chat and 20/min per group, so 40 chats
cannot all be sent in the first second: the platform minimum is one 1-second window plus one
API round trip. Prints `ratio_vs_rate_limit_minimum` (goal <= 1.1) and raw figures.

    .venv/bin/python bench/fanout.py [--chats 40] [--latency-ms 50] [--burst 3] [--smoke]
"""

from __future__ import annotations

import asyncio
import math
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

from aiohttp import ClientSession, FormData, web

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import cli  # noqa: E402
from bot.delivery.notifier import Notifier  # noqa: E402
from bot.delivery.ratelimit import DEFAULT_LIMITS, RateLimiter  # noqa: E402
from bot.domain.ledger import Event  # noqa: E402
from bot.domain.messages import Outbound, Reply  # noqa: E402
from bot.evidence.match_chart import incident_chart  # noqa: E402
from rigs.recording_sink import RecordingSink  # noqa: E402

TOKEN = "123:bench"


class FakeBotAPI:
    """sendPhoto/sendMessage with a fixed latency; records (arrival, chat) for every call."""

    def __init__(self, latency: float) -> None:
        self.latency = latency
        self.calls: list[tuple[float, str]] = []

    async def handle(self, request: web.Request) -> web.Response:
        form = await request.post()
        self.calls.append((time.monotonic(), str(form["chat_id"])))
        await asyncio.sleep(self.latency)
        return web.json_response({"ok": True, "result": {"message_id": len(self.calls)}})

    async def start(self) -> tuple[web.AppRunner, str]:
        app = web.Application(client_max_size=10 * 2**20)
        app.router.add_post(f"/bot{TOKEN}/{{method}}", self.handle)
        runner = web.AppRunner(app)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        return runner, f"http://127.0.0.1:{port}/bot{TOKEN}"


class HttpSink(RecordingSink):
    """A minimal Telegram sink: the summary goes as one photo with its caption; no edits
    (the recorder's other capabilities: no pins, albums or in-doubt lookups)."""

    platform = "telegram"

    def __init__(self, session: ClientSession, base: str) -> None:
        super().__init__()
        self.session, self.base = session, base
        self.done: list[float] = []
        self.started: list[tuple[float, str]] = []

    async def on_send(self, chat: str, reply: Reply) -> None:
        """Post the reply to the fake Bot API, timing the call."""
        self.started.append((time.monotonic(), chat))
        form = FormData()
        form.add_field("chat_id", chat)
        form.add_field("caption", (reply.title + "\n" + reply.text)[:1024])
        if reply.images:
            form.add_field("photo", reply.images[0], filename="chart.png",
                           content_type="image/png")
        method = "sendPhoto" if reply.images else "sendMessage"
        async with self.session.post(f"{self.base}/{method}", data=form) as resp:
            assert (await resp.json())["ok"]
        self.done.append(time.monotonic())

    async def edit(self, chat: str, message_id: str, reply: Reply) -> bool:
        """No edits."""
        return False


def summary_reply() -> Reply:
    """A realistic summary: dense text plus a rendered chart PNG."""
    ko = datetime(2026, 11, 25, 19, 45, tzinfo=UTC)
    evs = [Event("incident.reported", (ko + timedelta(minutes=7 * i)).isoformat(), "b", "s",
                 {"occurred_at": (ko + timedelta(minutes=7 * i - 90)).isoformat()},
                 phase=("gates", "first_half", "second_half", "egress")[i % 4])
           for i in range(30)]
    png = incident_chart(evs, "West Ham United v Chelsea: incidents per 15 min",
                         ZoneInfo("Europe/London"), ko) or b""
    text = ("Arrests: 7 (inside 3, outside 4; home 4, away 3)\n  by offence: Violent disorder 3, "
            "Throwing missiles 2, Public disorder 2\nBanning orders: 23 · Club ban, lifetime 7\n"
            "Incidents: 41 (2 open) · ejections 5\nTime to acknowledge: median 38s, worst 4m10")
    return Reply(text, title="Summary · West Ham United v Chelsea", images=[png])


def platform_minimum(messages_per_chat: int, chats: int, rtt: float) -> float:
    """Earliest the last response can arrive under Telegram's limits (per bot, chat, group)."""
    lims = DEFAULT_LIMITS["telegram"]
    per_bot = next(x for x in lims if x.scope == "platform")
    per_chat = next(x for x in lims if x.scope == "chat")
    per_group = next(x for x in lims if x.scope == "group")
    total = messages_per_chat * chats
    bot_bound = (math.ceil(total / per_bot.count) - 1) * per_bot.per
    chat_bound = (messages_per_chat - 1) * per_chat.per / per_chat.count
    group_bound = (math.ceil(messages_per_chat / per_group.count) - 1) * per_group.per
    return max(bot_bound, chat_bound, group_bound) + rtt


def max_in_window(times: list[float], per: float) -> int:
    """Most calls that arrived in any window of `per` seconds."""
    times = sorted(times)
    return max(sum(1 for u in times if t <= u < t + per) for t in times)


async def run(chats: int, latency: float, burst: int) -> dict[str, float | int]:
    fake = FakeBotAPI(latency)
    runner, base = await fake.start()
    reply = summary_reply()
    ids = [f"-100{i:04d}" for i in range(chats)]
    out: dict[str, float | int] = {}
    async with ClientSession() as session:
        sink = HttpSink(session, base)
        # one warm-up call measures the API round trip (fake latency + HTTP)
        t0 = time.monotonic()
        await sink.send("-1", reply)
        rtt = time.monotonic() - t0
        fake.calls.clear()
        for name, n in (("summary", 1), ("burst", burst)):
            notifier = Notifier({"summary": {"telegram": ids}}, limiter=RateLimiter())
            notifier.add_sink(sink)
            sink.done.clear()
            sink.started.clear()
            fake.calls.clear()
            start = time.monotonic()
            await notifier.send([Outbound("summary", reply)] * n)
            await notifier.drain()
            elapsed = time.monotonic() - start
            minimum = platform_minimum(n, chats, rtt)
            arrivals = [t for t, _ in fake.calls]
            sends = [t for t, _ in sink.started]
            per_chat = {c: sorted(t for t, cc in sink.started if cc == c) for c in ids}
            gaps = [b - a for ts in per_chat.values() for a, b in zip(ts, ts[1:], strict=False)]
            prefix = "" if name == "summary" else "burst_"
            out.update({
                f"{prefix}messages": len(fake.calls),
                f"{prefix}elapsed_s": round(elapsed, 4),
                f"{prefix}rate_limit_minimum_s": round(minimum, 4),
                f"{prefix}ratio_vs_rate_limit_minimum": round(elapsed / minimum, 4),
                f"{prefix}max_sends_any_1s_window": max_in_window(sends, 1.0),
                f"{prefix}min_gap_between_sends_same_chat_s": round(min(gaps), 4) if gaps else -1,
                # arrivals include the upload jitter of ~30 concurrent photo uploads
                f"{prefix}max_arrivals_any_1s_window_at_server": max_in_window(arrivals, 1.0),
            })
        out["api_round_trip_s"] = round(rtt, 4)
        out["chats"] = chats
        out["payload_png_bytes"] = len(reply.images[0])
    await runner.cleanup()
    return out


def main() -> None:
    """Run the benchmark and print `name: value` lines."""
    ap = cli.parser(__doc__)
    ap.add_argument("--chats", type=int, default=40)
    ap.add_argument("--latency-ms", type=float, default=50.0)
    ap.add_argument("--burst", type=int, default=3, help="messages per chat in the burst run")
    a = cli.parse(ap, {"chats": 6, "burst": 2})
    figures = asyncio.run(run(a.chats, a.latency_ms / 1000, a.burst))
    print(f"ratio_vs_rate_limit_minimum: {figures.pop('ratio_vs_rate_limit_minimum')}")
    for k, v in figures.items():
        print(f"{k}: {v}")


if __name__ == "__main__":
    main()
