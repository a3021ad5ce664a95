"""A Redis Cluster's `{ops}` slot made write-dead, and a fixture placed off its master, for
the HA tests of what must go on while the shared slot refuses writes."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

import pytest
import redis

from bot.core.dispatch import Core
from bot.domain.fixture.fixture_model import Fixture
from bot.sample import ensure_sample_fixture
from bot.store import Store
from bot.store.client import fx_prefix
from handlers.fixtures.commands import fixture_id
from tests.conftest import Chat


def node_port(store: Store, key: str) -> int:
    """The port of the cluster master holding `key`'s slot."""
    return int(store.gateway.r.get_node_from_key(key).port)


async def fixture_off(core: Core, store: Store, ops_port: int) -> Fixture:
    """The active fixture, made one whose slot is not on the `{ops}` master."""
    return await fixture_placed(core, store, lambda port: port != ops_port)


async def fixture_placed(core: Core, store: Store, wanted: Callable[[int], bool]) -> Fixture:
    """The active fixture, made one whose slot's master port is `wanted`."""
    fx = await ensure_sample_fixture(core)
    day = 1
    while not wanted(node_port(store, fx_prefix(fx.id))):  # a fixture in another slot
        r = await Chat(core)(f"/fixture add Leyton Orient v Barnet 2026-12-{day:02d} 15:00",
                             as_="admin")
        assert r.reply.ok, r.reply.text
        got = await store.fixture(fixture_id("Leyton Orient", "Barnet",
                                             datetime(2026, 12, day)))
        assert got is not None
        fx, day = got, day + 1
    await core.facades.choices.set_active_fixture(fx.id)
    await core.changed("fixture", fx.id)
    return fx


def refuse_writes(master: redis.Redis, key: str = "md:{ops}:probe") -> None:
    """Make a cluster master refuse every write, as one with no replica left does (`key`:
    one of its slots)."""
    master.config_set("min-replicas-to-write", 1)
    with pytest.raises(redis.ResponseError, match="NOREPLICAS"):
        master.set(key, "1")
