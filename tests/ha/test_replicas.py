"""Several bot replicas on one Redis: one leader for singleton duties, caches that follow a
change made on another replica, guided-form steps that cannot both win."""

from __future__ import annotations

import asyncio

import pytest

from bot.app import build_core
from bot.core.dispatch import Core
from bot.domain.outcomes import Reason
from bot.runtime import follow_changes
from bot.sample import ensure_sample_fixture
from bot.store import Refused, Store
from bot.store.lease import Lease
from tests.conftest import Chat


async def test_one_replica_holds_the_lease_and_a_standby_takes_over_when_it_lets_go(store):
    a = Lease(store.gateway, "singleton", "replica-a", ttl_ms=30_000)
    b = Lease(store.gateway, "singleton", "replica-b", ttl_ms=30_000)
    assert await a.tick() and not await b.tick()
    assert await a.tick()  # renewing
    await a.release()
    assert not a.held and await b.tick() and not await a.tick()


async def test_fixture_use_on_one_replica_moves_the_other_at_once(store, redis_url, settings,
                                                                   clock):
    a = build_core(store, settings, clock, cache_ttl=300)  # caches that would last minutes
    other = Store.from_url(redis_url)
    b = build_core(other, settings, clock, cache_ttl=300)
    fx = await ensure_sample_fixture(a)
    a.publish = lambda what, f: a.facades.changes.publish_change(what, f, "a")
    assert (await b.active_fixture()).id == fx.id  # now cached on b
    moved, listening = asyncio.Event(), asyncio.Event()

    async def hook(what: str, fixture: str) -> None:
        (moved if what == "active" else listening).set()

    b.hooks.append(hook)
    follower = asyncio.create_task(follow_changes(b, "b"))
    try:
        for _ in range(100):  # until b hears us (it subscribes in the background)
            await a.facades.changes.publish_change("hello", fx.id, "a")
            try:
                await asyncio.wait_for(listening.wait(), 0.1)
                break
            except TimeoutError:
                pass
        assert listening.is_set()
        say = Chat(a)
        r = await say("/fixture add Arsenal v Spurs 2026-12-05 12:30 cat=C", as_="admin")
        assert r.reply.ok, r.reply.text
        new = [f for f in await store.fixtures() if f.id != fx.id][0]
        assert (await say(f"/fixture use {new.id} all", as_="admin")).reply.ok
        await asyncio.wait_for(moved.wait(), 5)
        assert (await b.active_fixture()).id == new.id  # not the old one for minutes
    finally:
        follower.cancel()
        await asyncio.gather(follower, return_exceptions=True)
        await other.close()


async def test_two_taps_on_the_same_form_step_cannot_both_win(store, core: Core):
    fx = await core.active_fixture()
    await core.facades.forms.save_form(fx.id, "console:steward", {"fid": "f1", "step": "type"}, 60)
    here = await core.facades.forms.form(fx.id, "console:steward")
    there = await core.facades.forms.form(fx.id,
                                          "console:steward")  # the same step, read on a replica
    here.update(type="pyro", step="location")
    await core.facades.forms.save_form(fx.id, "console:steward", here, 60)
    there.update(type="missile", step="location")
    with pytest.raises(Refused) as refused:
        await core.facades.forms.save_form(fx.id, "console:steward", there, 60)
    assert refused.value.reason is Reason.STEP_TAKEN
    assert (await core.facades.forms.form(fx.id, "console:steward"))["type"] == "pyro"
