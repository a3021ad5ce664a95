"""A Redis Cluster with `cluster-require-full-coverage yes` (Redis' default) stops every slot
from the moment one master is marked failed until its replica has taken over: each master
answers CLUSTERDOWN and the client waits out a topology refresh, so every fixture's reports
and cards stopped for 0.5-2.5 s in bench/saturday.py's paused master, not only that
master's. README recommends `no`; the bot says so in one line at start-up when a master has
`yes` (#34)."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import time
from pathlib import Path

import pytest
import redis
from redis.exceptions import ClusterDownError

from bot.app import App
from bot.settings import load_settings
from bot.store.base import StoreUnavailable
from bot.store.gateway import Gateway
from rigs.topology import start_cluster


async def _refusals_while_one_master_fails(topo, gateway: Gateway, key: str,  # type: ignore[no-untyped-def]
                                          paused: int) -> tuple[int, int]:
    """While the master on `paused` is stopped, until the others have marked it failed and
    its replica has taken over: how often the healthy master of `key` answered CLUSTERDOWN
    (asked directly), and how many of the bot's calls there failed."""
    healthy = redis.Redis(port=topo.master_of(key), socket_timeout=1)
    counts = {"down": 0, "failed": 0}
    over = asyncio.Event()

    async def failover() -> None:
        end = time.monotonic() + 30
        while time.monotonic() < end and await asyncio.to_thread(
                topo.master_of, "md:{paused-probe}:x") == paused:
            await asyncio.sleep(0.1)  # polling the cluster's view, not timing anything
        over.set()

    async def ask_directly() -> None:
        while not over.is_set():
            try:
                healthy.set(key, "1")
            except ClusterDownError:  # CLUSTERDOWN: "The cluster is down"
                counts["down"] += 1
            await asyncio.sleep(0.02)

    async def ask_through_the_bot() -> None:
        while not over.is_set():
            try:
                await gateway.call(lambda r: r.set(key, "1"))
            except StoreUnavailable:
                counts["failed"] += 1
            await asyncio.sleep(0.02)

    os.kill(topo.pid(paused), signal.SIGSTOP)
    try:
        await asyncio.gather(failover(), ask_directly(), ask_through_the_bot())
    finally:
        os.kill(topo.pid(paused), signal.SIGCONT)
    return counts["down"], counts["failed"]


@pytest.mark.parametrize("coverage", ["no", "yes"])
async def test_a_failing_master_stops_only_its_own_slots_when_coverage_is_not_required(
        tmp_path: Path, coverage: str) -> None:
    topo = start_cluster(tmp_path / "cluster", 3, 1)
    gateway = Gateway.from_url(topo.url)
    try:
        if coverage == "yes":  # Redis' default; the rig sets README's recommended "no"
            for port in list(topo.procs):
                redis.Redis(port=port).config_set("cluster-require-full-coverage", "yes")
        paused = topo.master_of("md:{paused-probe}:x")
        healthy = next(f"md:{{h-{k}}}:x" for k in range(100)
                       if topo.master_of(f"md:{{h-{k}}}:x") != paused)
        assert await gateway.whole_cluster_stops() == (3 if coverage == "yes" else 0)
        down, failed = await _refusals_while_one_master_fails(topo, gateway, healthy, paused)
        if coverage == "no":
            assert (down, failed) == (0, 0)  # the healthy master served its slots throughout
        else:
            assert down > 0  # every master refused while one was marked failed
    finally:
        await gateway.close()
        topo.stop()


async def test_the_bot_says_so_at_start_up(tmp_path: Path,
                                           caplog: pytest.LogCaptureFixture) -> None:
    """... and of a master that waits before a replica's full sync (Redis' default 5 s):
    after bench/saturday.py's paused master came back as a replica, its fixtures' reports
    were HELD and their cards waited 5 s more (after-fault p95 6.8-7.4 s against 3.3-3.4 s)."""
    topo = start_cluster(tmp_path / "cluster", 3, 0)  # the rig sets both as README says
    redis.Redis(port=topo.master_of("md:{x}:x")).config_set(
        "cluster-require-full-coverage", "yes")
    for port in list(topo.procs)[:2]:
        redis.Redis(port=port).config_set("repl-diskless-sync-delay", "5")
    app = App(load_settings(REDIS_URL=topo.url, MATCHDAY_DATA_DIR=str(tmp_path / "data")))
    try:
        with caplog.at_level(logging.WARNING):
            await app.start()
            await app.check_durability()
        lines = [r.getMessage() for r in caplog.records if "full-coverage" in r.getMessage()]
        assert len(lines) == 1 and "1 master(s)" in lines[0] and "\n" not in lines[0]
        lines = [r.getMessage() for r in caplog.records if "sync-delay" in r.getMessage()]
        assert len(lines) == 1 and "2 master(s)" in lines[0] and "\n" not in lines[0]
    finally:
        await app.stop()
        topo.stop()
