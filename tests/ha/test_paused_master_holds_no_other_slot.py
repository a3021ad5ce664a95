"""A Cluster master paused (SIGSTOP: a frozen VM) holds up only its own slots: an outbox entry
of a fixture on another master is confirmed on its replicas and handed out meanwhile (#34).
Re-counting the replicas in sync asked every master, the paused one included, on the write
and read paths themselves: every fixture's reports and control cards waited out its
timeouts while one master was paused (Telegram sent nothing for 3-4 s in bench/saturday.py
--fault pause)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from pathlib import Path

import redis

from bot.store import Store
from bot.store.base import StoreUnavailable
from bot.store.outbox import Outbox
from bot.store.windows import Windows
from rigs.topology import start_cluster
from tests.support.failover import until


def _seen_failing(port: int, paused: int) -> bool:
    """Whether the master on `port` sees the one on `paused` as failing (PFAIL or FAIL)."""
    nodes = redis.Redis(port=port, decode_responses=True).execute_command("CLUSTER", "NODES")
    text = nodes if isinstance(nodes, str) else "\n".join(map(str, nodes))
    return any(f":{paused}@" in line and "fail" in line.split()[2] for line in text.splitlines())


async def test_a_paused_master_does_not_hold_another_masters_fixtures(tmp_path: Path) -> None:
    topo = start_cluster(tmp_path / "cluster", 3, 1)
    store = Store.from_url(topo.url)
    try:
        assert await store.gateway.configure_replication() == 1
        paused = topo.master_of("md:{fx-paused}:obx")
        healthy = next(f"md:{{fx-{k}}}:obx" for k in range(100)
                       if topo.master_of(f"md:{{fx-{k}}}:obx") != paused)
        other = topo.master_of(healthy)
        assert await store.gateway.replicated(healthy)
        os.kill(topo.pid(paused), signal.SIGSTOP)
        try:
            # the other masters notice (after the cluster's node timeout): by then the
            # replicas in sync are due to be counted again
            await until(lambda: _seen_failing(other, paused), "the pause to be noticed")
            confirm = asyncio.create_task(store.gateway.replicated(healthy))
            for _ in range(50):  # round trips to that healthy master meanwhile ...
                await store.gateway.call(lambda r: r.get(healthy + ":probe"))
            assert confirm.done(), "the write waited for the paused master"  # ... not more
            assert confirm.result()
        finally:
            os.kill(topo.pid(paused), signal.SIGCONT)
    finally:
        await store.close()
        topo.stop()


async def test_a_paused_default_node_holds_no_write_while_the_clock_is_measured_again(
        tmp_path: Path) -> None:
    """The write fence's clock offset is measured with TIME, which goes to the client's
    default node: due again (each minute) while that master was paused, every fenced write
    (reports, outbox marks, rate-window takes) waited out its timeout."""
    topo = start_cluster(tmp_path / "cluster", 3, 0)
    store = Store.from_url(topo.url)
    windows = Windows(store.gateway)
    try:
        await store.gateway.configure_replication()
        paused = int(store.gateway.r.get_default_node().port)
        healthy = next(f"md:{{w-{k}}}:rl" for k in range(100)
                       if topo.master_of(f"md:{{w-{k}}}:rl") != paused)
        assert await windows.take([(healthy, 30, 1.0)], time.time()) == 0
        store.gateway._clock_measured -= 61.0  # a minute on: the offset is due again
        os.kill(topo.pid(paused), signal.SIGSTOP)
        try:
            take = asyncio.create_task(windows.take([(healthy, 30, 1.0)], time.time()))
            for _ in range(50):  # round trips to the healthy master meanwhile ...
                await store.gateway.call(lambda r: r.get(healthy + ":probe"))
            assert take.done(), "the write waited for the paused default node"  # ... not more
            assert take.result() == 0
        finally:
            os.kill(topo.pid(paused), signal.SIGCONT)
    finally:
        await store.close()
        topo.stop()


async def test_a_paused_default_node_holds_no_outbox_read_of_another_master(
        tmp_path: Path) -> None:
    """redis-py finds the keys of XREADGROUP by asking the client's default node (COMMAND
    GETKEYS): with that master paused, every fixture's outbox read waited out its timeout
    and the reader paused a second more, so the stewards of a fixture on a healthy master got
    no "Logged" for 3 s (bench/saturday.py --fault pause, t = 80.3-83.1 s)."""
    topo = start_cluster(tmp_path / "cluster", 3, 0)
    store = Store.from_url(topo.url)
    try:
        await store.gateway.configure_replication()
        paused = int(store.gateway.r.get_default_node().port)
        fx = next(f"fx-{k}" for k in range(100)
                  if topo.master_of(f"md:{{fx-{k}}}:obx") != paused)
        outbox = Outbox(store.gateway)
        await outbox.ensure_group(fx)
        assert await outbox.read(fx, "reader", 10) == []
        stuck = next(f"md:{{p-{k}}}:x" for k in range(100)
                     if topo.master_of(f"md:{{p-{k}}}:x") == paused)
        os.kill(topo.pid(paused), signal.SIGSTOP)
        try:
            read = asyncio.create_task(outbox.read(fx, "reader", 10))
            probe = asyncio.create_task(store.gateway.call(lambda r: r.get(stuck)))
            done, _ = await asyncio.wait({read, probe}, return_when=asyncio.FIRST_COMPLETED)
            assert read in done, "the read waited for the paused default node"
            assert read.result() == []  # answered by its own master (old: a timeout)
            probe.cancel()  # the paused master's own call: only the order mattered
            with contextlib.suppress(asyncio.CancelledError, StoreUnavailable):
                await probe
        finally:
            os.kill(topo.pid(paused), signal.SIGCONT)
    finally:
        await store.close()
        topo.stop()
