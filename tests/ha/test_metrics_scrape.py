"""/metrics as Prometheus scrapes it: 429s and delivery queues per platform, briefings by
outcome, escalations fired, the store latency histogram."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import aiohttp
from prometheus_client.parser import text_string_to_metric_families

from bot.delivery.notifier import Notifier
from bot.delivery.ratelimit import unlimited
from bot.delivery.sink import RetryLater
from bot.domain.messages import Outbound, Reply
from bot.observe import metrics
from bot.observe.endpoints import health_routes
from bot.runtime import attach_scheduler, scheduler_for
from handlers import sweep_escalations
from rigs.net import serving
from rigs.recording_sink import RecordingSink
from tests.conftest import START


class Sink(RecordingSink):
    """A platform that answers 429 to the first send, then holds the next until released."""

    def __init__(self) -> None:
        super().__init__("telegram")
        self.sends = 0
        self.release = asyncio.Event()

    async def send(self, chat: str, reply: Reply, thread: str = "", quote: str = "") -> str:
        self.sends += 1
        if self.sends == 1:
            raise RetryLater(0.0, "telegram 429")
        if self.sends == 3:
            await self.release.wait()
        return str(self.sends)

    async def edit(self, chat: str, message_id: str, reply: Reply) -> bool:
        return True


async def scrape(port: int) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    async with aiohttp.ClientSession() as http, \
            http.get(f"http://127.0.0.1:{port}/metrics") as resp:
        assert resp.status == 200 and resp.headers["Content-Type"].startswith("text/plain")
        text = await resp.text()
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for fam in text_string_to_metric_families(text) for s in fam.samples}


async def test_metrics_scrape_shows_every_figure_the_issue_names(core, say, clock, store):
    now = [1000.0]
    notifier = Notifier({"control": {"telegram": ["-100"]}}, unlimited(), clock=lambda: now[0])
    sink = Sink()
    notifier.add_sink(sink)
    metrics.watch_delivery(notifier.pending, notifier.clock, lambda: list(notifier.sinks))
    store.gateway.observe_latency = metrics.STORE_SECONDS.observe
    async with serving(health_routes(store.gateway.ping, lambda: "leader")) as port:
        try:
            await _scraped(port, notifier, sink, now, core, say, clock)
        finally:
            sink.release.set()
            await notifier.close()
            metrics.DELIVERY.sources.clear()
            store.gateway.observe_latency = None


async def _scraped(port: int, notifier: Notifier, sink: Sink, now: list[float], core, say,
                   clock) -> None:
    """Cause each figure, then scrape."""
    before = await scrape(port)

    def grew(after: dict, name: str, **labels: str) -> float:
        key = (name, tuple(sorted(labels.items())))
        return after.get(key, 0.0) - before.get(key, 0.0)

    # A 429, then a message held by the platform while another waits behind it.
    await notifier.send([Outbound("control", Reply(f"m{i}")) for i in range(3)])

    async def third_send() -> None:
        while sink.sends < 3:
            await asyncio.sleep(0)
    await asyncio.wait_for(third_send(), 5)
    now[0] += 42.0
    # Briefings (sent and missed), an escalation, store round trips.
    scheduler = attach_scheduler(core, scheduler_for(core, clock, live=False))
    await scheduler.start()  # T-24h and friends were due before the fixture existed
    await scheduler.run_due(START + timedelta(hours=1))  # T-1h: on time
    await say("/incident crowd_density @gate_away s5 crush", as_="steward")
    assert await sweep_escalations(core, core.store, clock.now() + timedelta(seconds=1))
    after = await scrape(port)
    assert grew(after, "matchday_rate_limited_total", platform="telegram") == 1
    depth = after[("matchday_delivery_queue_depth", (("club", ""), ("platform", "telegram")))]
    oldest = after[("matchday_delivery_oldest_seconds", (("club", ""), ("platform", "telegram")))]
    assert depth == 2 and oldest == 42.0  # one at the platform, one waiting behind it
    assert grew(after, "matchday_briefings_total", outcome="sent") >= 1
    for outcome in ("late", "missed"):  # scraped even while 0
        assert ("matchday_briefings_total", (("outcome", outcome),)) in after
    assert grew(after, "matchday_escalations_fired_total") >= 1
    assert grew(after, "matchday_store_seconds_count") > 0
    assert ("matchday_store_seconds_bucket", (("le", "0.005"),)) in after
    sink.release.set()
    await notifier.drain()
    drained = await scrape(port)
    assert drained[("matchday_delivery_queue_depth", (("club", ""), ("platform", "telegram")))] == 0
