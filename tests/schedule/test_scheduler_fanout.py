"""Fan-out through the notifier respects per-chat, per-group and per-bot limits (fake time)."""

from __future__ import annotations

import asyncio
import heapq
import itertools
from collections import defaultdict

from bot.delivery.notifier import Notifier
from bot.delivery.ratelimit import RateLimiter
from bot.domain.messages import Outbound, Reply
from rigs.recording_sink import RecordingSink


class FakeTime:
    """Virtual monotonic time: sleepers wake in time order when everything else is blocked."""

    def __init__(self) -> None:
        self.now = 0.0
        self._heap: list[tuple[float, int, asyncio.Future[None]]] = []
        self._seq = itertools.count()

    def clock(self) -> float:
        return self.now

    async def sleep(self, delay: float) -> None:
        fut = asyncio.get_running_loop().create_future()
        heapq.heappush(self._heap, (self.now + delay, next(self._seq), fut))
        await fut

    async def run(self, coro) -> None:  # type: ignore[no-untyped-def]
        task = asyncio.ensure_future(coro)
        while not task.done():
            for _ in range(20):
                await asyncio.sleep(0)
            if self._heap and not task.done():
                t, _, fut = heapq.heappop(self._heap)
                self.now = max(self.now, t)
                fut.set_result(None)
        await task


async def delivered(n: Notifier, outs: list[Outbound]) -> None:
    """Send, then wait until every chat's queue has been handed to its sink."""
    await n.send(outs)
    await n.drain()


class Sink(RecordingSink):
    def __init__(self, platform: str, time: FakeTime) -> None:
        super().__init__(platform)
        self.time = time
        self.calls: list[tuple[float, str, str]] = []

    async def on_send(self, chat: str, reply: Reply) -> None:
        self.calls.append((self.time.now, chat, reply.text))


def windows_ok(times: list[float], count: int, per: float) -> bool:
    times = sorted(times)
    return all(sum(1 for u in times if t <= u < t + per) <= count for t in times)


def setup(chats_tg: list[str], chats_slack: list[str]) -> tuple[Notifier, FakeTime, Sink, Sink]:
    time = FakeTime()
    n = Notifier({"summary": {"telegram": chats_tg, "slack": chats_slack, "console": ["s"]}},
                 limiter=RateLimiter(clock=time.clock, sleep=time.sleep))
    tg, sl, con = Sink("telegram", time), Sink("slack", time), Sink("console", time)
    for s in (tg, sl, con):
        n.add_sink(s)
    return n, time, tg, sl


async def test_fanout_to_many_chats_respects_limits_and_order():
    groups = [f"-100{i:03d}" for i in range(40)]
    channels = [f"C{i}" for i in range(5)]
    n, time, tg, sl = setup(groups, channels)
    outs = [Outbound("summary", Reply(f"msg {k}")) for k in range(3)]
    await time.run(delivered(n, outs))
    assert len(tg.calls) == 120 and len(sl.calls) == 15
    per_chat: dict[str, list[tuple[float, str]]] = defaultdict(list)
    for t, chat, text in tg.calls + sl.calls:
        per_chat[chat].append((t, text))
    for chat, rows in per_chat.items():
        assert [x for _, x in rows] == ["msg 0", "msg 1", "msg 2"], chat  # order kept
        assert all(b[0] - a[0] >= 1.0 for a, b in itertools.pairwise(rows)), chat
    assert windows_ok([t for t, _, _ in tg.calls], 30, 1.0)  # ~30 msg/s per bot
    # optimal: 120 messages at 30/s cannot finish before t=3.0; the limiter achieves it
    assert max(t for t, _, _ in tg.calls) == 3.0
    assert max(t for t, _, _ in sl.calls) == 2.0  # Slack: 1/s per channel only


async def test_group_limit_twenty_per_minute():
    n, time, tg, _ = setup(["-1001"], [])
    await time.run(delivered(n, [Outbound("summary", Reply(f"m{k}")) for k in range(25)]))
    times = [t for t, _, _ in tg.calls]
    assert times[:20] == [float(k) for k in range(20)]
    assert times[20] == 60.0  # the 21st waits for the minute window
    assert windows_ok(times, 20, 60.0)


async def test_console_is_not_limited_and_failures_are_isolated():
    n, time, tg, _ = setup(["-1"], [])

    async def broken(chat: str, reply: Reply) -> None:
        raise RuntimeError("slack down")

    n.add_sink(RecordingSink("slack", broken))
    n.channels["summary"]["slack"] = ["C1"]
    await time.run(delivered(n, [Outbound("summary", Reply("x"))] * 3))
    assert len(tg.calls) == 3
    con = n.sinks["console"]
    assert [t for t, _, _ in con.calls] == [0.0, 0.0, 0.0]  # type: ignore[attr-defined]
