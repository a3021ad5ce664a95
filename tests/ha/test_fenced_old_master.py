"""Reports written while the master is paused wait in its sockets; the sentinels promote a
replica meanwhile. When the old master resumes it runs what waited before it learns it was
replaced: the write script refuses every write that waited longer than the fence (nothing
written there), and the store sends it once more, to the new master, where it is logged."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

import redis

from bot.app import build_core
from bot.domain.ledger import Event
from bot.sample import ensure_sample_fixture
from bot.settings import load_settings
from bot.store import Store, StoreUnavailable
from rigs.topology import start_sentinel
from tests.support.failover import KeyspaceWatch, promote_a_replica

QUEUED = 8  # reports sent to the paused master


async def _report(store: Store, fx: str, i: int) -> str:
    """One steward's report, as the /incident handler writes it; 'logged' or why not."""
    fields = {"type": "pyro", "location": "away_upper", "severity": "3",
              "reporter": f"telegram:{100 + i}", "text": f"flare {i}"}
    ev = Event("incident.reported", "2026-11-25T19:30:00+00:00", f"telegram:{100 + i}",
               "steward", {"id": "INC-?", **fields}, phase="first_half")
    try:
        await store.report_incident(fx, fields, ev, 1_700_000_000 + i, f"queued-{i}")
    except StoreUnavailable as exc:
        return f"not logged: {exc}"
    return "logged"


async def test_writes_queued_in_a_paused_old_master_are_not_applied_there(tmp_path: Path,
                                                                          clock):
    topo = start_sentinel(tmp_path / "redis", replicas=2, down_after_ms=60_000)
    store = Store.from_url(topo.url)
    watch = KeyspaceWatch(topo.master_port)
    old = topo.master_port
    try:
        await store.gateway.configure_replication(timeout_ms=300)
        settings = load_settings(REDIS_URL=topo.url, MATCHDAY_DATA_DIR=str(tmp_path))
        core = build_core(store, settings, clock, cache_ttl=0)
        fx = (await ensure_sample_fixture(core)).id
        # every key the old master writes from now on is announced on its pub/sub
        await watch.start("*dedupe:queued-*")
        # pooled connections to the first master, as a busy bot has
        await asyncio.gather(*(store.gateway.r.get(f"warm:{i}") for i in range(QUEUED)))

        os.kill(topo.pid(old), signal.SIGSTOP)  # the master pauses with reports on the way
        try:
            reports = [asyncio.create_task(_report(store, fx, i)) for i in range(QUEUED)]
            new = await promote_a_replica(topo, old)  # ... the sentinels promote a replica
        finally:
            os.kill(topo.pid(old), signal.SIGCONT)  # ... and the old master resumes
        answers = await asyncio.gather(*reports)

        # what the resumed old master wrote of the queued reports (up to a marker sent now)
        written = {k.rsplit(":", 1)[1] for k in await watch.written()}
        assert written == set(), f"applied on the replaced master: {sorted(written)}"
        # and the reports were not lost: each is logged once, on the new master
        assert answers == ["logged"] * QUEUED, answers
        logged = redis.Redis(port=new, decode_responses=True).keys(f"md:{{{fx}}}:dedupe:queued-*")
        assert len(logged) == QUEUED
    finally:
        await watch.close()
        await store.close()
        topo.stop()
