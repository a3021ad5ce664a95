"""A resend after "NOT CONFIRMED" is recognised on whichever replica it reaches: the memory of
unsure writes is written through to Redis once it answers again, and the other replicas learn
of it on the changes channel (or from the store when they (re)subscribe). A healthy night pays
no round trip for it."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from datetime import timedelta
from urllib.parse import urlparse

import pytest

from bot.app import build_core
from bot.core.dispatch import Core
from bot.runtime import follow_changes
from bot.sample import ensure_sample_fixture
from bot.store import Store
from rigs.fakes.flaky_link import FlakyLink
from tests.conftest import Chat

# An arrest: two identical arrests are two (no merging of similar reports hides a double).
REPORT = "/arrest violent_disorder x1 inside away ref=CUST-1"
WHO = "police_liaison"


async def until(cond: Callable[[], bool], timeout: float = 5.0) -> None:
    """Wait for a condition another task brings about (pub/sub delivery), bounded."""
    async def poll() -> None:
        while not cond():
            await asyncio.sleep(0.01)
    await asyncio.wait_for(poll(), timeout)


class Replicas:
    """Cores over the same Redis, each following the changes channel as run_bot does."""

    def __init__(self, settings, clock) -> None:
        self.settings, self.clock = settings, clock
        self.tasks: list[asyncio.Task[None]] = []
        self.stores: list[Store] = []

    async def start(self, url: str, name: str) -> Core:
        store = Store.from_url(url)
        self.stores.append(store)
        core = build_core(store, self.settings, self.clock, cache_ttl=0)
        core.publish = lambda what, fx: core.facades.changes.publish_change(what, fx, name)
        self.tasks.append(asyncio.create_task(follow_changes(core, name)))
        return core

    async def stop(self) -> None:
        for t in self.tasks:
            t.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await t
        for s in self.stores:
            await s.close()


@pytest.fixture
async def cluster(server, settings, clock) -> AsyncIterator[tuple[Replicas, FlakyLink, str]]:
    """Replicas, and a flaky link to the server with its URL."""
    link = FlakyLink("127.0.0.1", urlparse(server.url).port or 6379, server.password)
    replicas = Replicas(settings, clock)
    yield replicas, link, await link.start()
    await replicas.stop()
    await link.stop()


async def not_confirmed_on(first: Core, link: FlakyLink) -> None:
    say = Chat(first)
    assert (await say("/incident missile @seg_ne s4", as_="steward")).reply.ok
    link.lose_next_script_reply()  # Redis runs the report, then "dies" before answering
    r = await say(REPORT, as_=WHO)
    assert r.reply.text.startswith("NOT CONFIRMED"), r.reply.text
    link.restore()


async def arrests(core: Core) -> int:
    fx = await core.active_fixture()
    return (await core.store.counts(fx.id))["arr:total"]


async def test_a_resend_reaching_another_replica_is_logged_once(cluster, server):
    replicas, link, flaky_url = cluster
    one = await replicas.start(flaky_url, "replica-1")
    two = await replicas.start(server.url, "replica-2")
    await ensure_sample_fixture(one)
    await not_confirmed_on(one, link)

    # Redis answers again: the next command on replica 1 (anyone's) writes the memory
    # through and tells replica 2, which then looks the officer's resend up.
    assert (await Chat(one)("/status", as_="control")).reply.ok
    await until(lambda: two.unsure.watching(two.clock.now()))
    r = await Chat(two)(REPORT, as_=WHO)  # the resend, with a new message id
    assert r.reply.text.startswith("Already recorded"), r.reply.text
    assert await arrests(two) == 1  # logged once, not twice

    # Its outcome is known now, on every replica: the same words again are a new report.
    r = await Chat(one)(REPORT, as_=WHO)
    assert r.reply.ok and not r.reply.text.startswith("Already recorded"), r.reply.text
    assert await arrests(one) == 2


async def test_a_replica_that_was_not_listening_learns_from_the_store(cluster, server):
    replicas, link, flaky_url = cluster
    one = await replicas.start(flaky_url, "replica-1")
    await ensure_sample_fixture(one)
    await not_confirmed_on(one, link)
    assert (await Chat(one)("/status", as_="control")).reply.ok  # written through

    late = await replicas.start(server.url, "replica-3")  # started (or resubscribed) later
    await until(lambda: late.unsure.watching(late.clock.now()))
    r = await Chat(late)(REPORT, as_=WHO)
    assert r.reply.text.startswith("Already recorded"), r.reply.text
    assert await arrests(late) == 1


async def test_a_healthy_night_pays_no_round_trip_for_resends(core, say):
    calls: list[float] = []
    core.store.gateway.observe_latency = calls.append

    async def trips(text: str) -> int:
        calls.clear()
        assert (await say(text, as_="control")).reply.ok
        return len(calls)

    await trips("/status")  # caches warm
    healthy = await trips("/status")
    core.unsure.watch(core.clock.now() + timedelta(minutes=5))  # as another replica tells
    assert await trips("/status") == healthy + 1  # only while told of unsure writes
