"""Slack Home tabs with two app instances on one Redis: who has the tab open is in Redis, and
only the leader-lease holder refreshes it, on a change made on either instance."""

from __future__ import annotations

import asyncio
import json

from pydantic import SecretStr

from bot.app import build_core
from bot.runtime import follow_changes, slack_for
from bot.sample import ensure_sample_fixture
from bot.store import Store
from bot.store.lease import Lease
from rigs.fakes.slack_api import (
    RESPONSE_HOSTS,
    SIGNING_SECRET,
    FakeSlack,
    bolt_request,
    event_body,
)
from tests.conftest import Chat

CONTROL = "U0CONTROL1"


async def test_a_home_tab_opened_on_one_replica_is_refreshed_once_by_the_leader(
        store, redis_url, settings, clock):
    fake = FakeSlack()
    await fake.start()
    s = settings.model_copy(update={"slack_bot_token": SecretStr("xoxb-test"),
                                    "slack_signing_secret": SecretStr(SIGNING_SECRET),
                                    "slack_api_url": fake.api_url,
                                    "slack_response_hosts": RESPONSE_HOSTS})
    other = Store.from_url(redis_url)
    a, b = build_core(store, s, clock, cache_ttl=0), build_core(other, s, clock, cache_ttl=0)
    await ensure_sample_fixture(a)
    leases = {"a": Lease(store.gateway, "singleton", "a"),
              "b": Lease(other.gateway, "singleton", "b")}
    assert await leases["a"].tick() and not await leases["b"].tick()  # a leads
    apps = {"a": slack_for(a, s), "b": slack_for(b, s)}
    heard: dict[str, asyncio.Event] = {"a": asyncio.Event(), "b": asyncio.Event()}
    tasks = []
    for name, core in (("a", a), ("b", b)):
        apps[name].home.leader = lambda name=name: leases[name].held
        core.publish = lambda what, f, ch=core.facades.changes, n=name: ch.publish_change(what, f,
                                                                                          n)
        # The hellos below are the test's probes, not changes: a cluster publishes each
        # through a random primary, so one can arrive after the tab is open, out of order,
        # and must not count as a refresh.
        at = core.hooks.index(apps[name].home.on_change)

        async def real_changes(what: str, fx: str, home=core.hooks[at]) -> None:
            if what != "hello":
                await home(what, fx)
        core.hooks[at] = real_changes

        async def hear(what: str, fx: str, name: str = name) -> None:
            if what == "hello":
                heard[name].set()
        core.hooks.append(hear)
        tasks.append(asyncio.create_task(follow_changes(core, name)))
    for app in apps.values():
        await app.start()
    try:
        for _ in range(100):  # until both have subscribed (in the background)
            await a.facades.changes.publish_change("hello", "-", "test")
            if heard["a"].is_set() and heard["b"].is_set():
                break
            await asyncio.sleep(0.05)
        # The member opens the Home tab on b (the standby): b answers it at once.
        ev = {"type": "app_home_opened", "user": CONTROL, "channel": "D0CONTROL1",
              "tab": "home"}
        resp = await apps["b"].bolt_app.async_dispatch(
            bolt_request(event_body(ev, "Ev0HOMEB"), content_type="application/json"))
        assert resp.status == 200
        await fake.wait_call("views.publish")
        assert await b.facades.platform.home_watchers(0) == [CONTROL]  # every replica can see it
        # A report on b: a (the leader) hears of it over pub/sub and refreshes the tab.
        r = await Chat(b)("/incident disorder @stb_walkway s4 fight", as_="steward")
        assert r.reply.title.startswith("Logged INC-1")
        calls = await fake.wait_call("views.publish", count=2)
        assert "INC-1" in json.dumps(calls[-1].params["view"])
        # A report on a: refreshed again, by a alone (b is not the leader).
        await Chat(a)("/incident pyro @away_upper s3 flare", as_="steward")
        calls = await fake.wait_call("views.publish", count=3)
        assert "INC-2" in json.dumps(calls[-1].params["view"])
        for app in apps.values():
            await app.flush()
            for task in list(app._tasks):
                await task
        assert len(fake.of("views.publish")) == 3  # each change refreshed once, not twice
    finally:
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for app in apps.values():
            await app.stop()
        await other.close()
        await fake.stop()
