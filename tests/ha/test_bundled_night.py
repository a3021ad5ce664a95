"""The bundled West Ham v Chelsea night gives the same summary on a plain server, a 3-master
Cluster and Sentinel (master + replica, every write WAITed for)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bot.app import App
from bot.cli import demo_script
from bot.core.drill import Drill
from bot.domain.clock import VirtualClock
from bot.embedded_redis.supervisor import EmbeddedRedis
from bot.evidence.summary import summary_figures
from bot.replay import printer, read_script, replay
from bot.runtime import make_scheduler
from bot.settings import load_settings


async def _night(url: str, tmp_path: Path) -> dict[str, Any]:
    clock = VirtualClock(datetime(2000, 1, 1, tzinfo=UTC))
    app = App(load_settings(REDIS_URL=url, MATCHDAY_DATA_DIR=str(tmp_path)), clock,
              drill=Drill(live=False))  # as `matchday replay` does
    core = await app.start()
    try:
        await core.store.reset_for_tests()
        lines = read_script(demo_script())
        clock.set(lines[0].at)
        scheduler = make_scheduler(app, live=False)
        await scheduler.start()
        try:
            await replay(core, scheduler, clock, lines, demo_script().name,
                         printer(True, out=lambda _: None))
        finally:
            await scheduler.stop()
        fx = await core.active_fixture()
        return await summary_figures(core.store, core.facades, fx)
    finally:
        await app.stop()


async def test_the_bundled_night_sums_up_the_same_on_cluster_and_sentinel(
        cluster, replicated, tmp_path: Path):
    # its own plain server, so the Redis-marked re-runs in CI do not replay it again
    server = EmbeddedRedis(tmp_path / "redis", persistent=False)
    try:
        plain = await _night(server.start(), tmp_path / "plain")
    finally:
        server.stop()
    assert plain["incidents"]["total"] > 0 and plain["arrests"]["total"] > 0
    assert await _night(cluster.url, tmp_path / "cluster") == plain
    assert await _night(replicated.url, tmp_path / "sentinel") == plain
