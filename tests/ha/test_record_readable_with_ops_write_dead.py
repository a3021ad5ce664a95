"""The night's record is read with the `{ops}` slot write-dead: on a Redis Cluster whose
`{ops}` master refuses writes (NOREPLICAS, as a master with no replica left under
`min-replicas-to-write 1` answers), `matchday export`, `summary`, `report` and `pack` of a
fixture in another, healthy slot still succeed (they used to fail on a write to the shared
slot: the audit trail's shared stream; their entries now go to the fixture's own trail,
where `matchday heads` finds them) (#34 item 2)."""

from __future__ import annotations

from pathlib import Path

import redis

from bot.app import build_core
from bot.settings import load_settings
from bot.store import Store
from bot.store.base import OPS
from tests.conftest import Chat
from tests.support.cli import matchday
from tests.support.ops_slot import fixture_off, node_port, refuse_writes


async def test_export_summary_report_and_pack_succeed_while_the_ops_slot_refuses_writes(
        cluster, clock, tmp_path: Path) -> None:
    store = Store.from_url(cluster.url)
    await store.reset_for_tests()
    settings = load_settings(REDIS_URL=cluster.url, MATCHDAY_DATA_DIR=str(tmp_path / "data"))
    core = build_core(store, settings, clock)
    ops_port = node_port(store, OPS)
    ops = redis.Redis(port=ops_port, decode_responses=True)
    try:
        fx = await fixture_off(core, store, ops_port)
        say = Chat(core)
        for text in ("/incident pyro @away_upper s3 flare", "/incident missile @seg_ne s2 coin"):
            r = await say(text, as_="steward")
            assert r is not None and r.reply.ok, r and r.reply.text
        refuse_writes(ops)
        env = {"REDIS_URL": cluster.url, "MATCHDAY_DATA_DIR": str(tmp_path / "data")}
        runs = {
            "export": matchday("export", "--fixture", fx.id, "--out", str(tmp_path / "ex"),
                               env=env),
            "summary": matchday("summary", "--fixture", fx.id, "--json", env=env),
            "report": matchday("report", "--fixture", fx.id, "--pdf", "--out",
                               str(tmp_path / "report.pdf"), env=env),
            "pack": matchday("pack", "--fixture", fx.id, "--out", str(tmp_path / "pack"),
                             env=env),
        }
        failed = {cmd: run.stderr.strip()[-300:] for cmd, run in runs.items()
                  if run.returncode != 0}
        assert failed == {}
        assert (tmp_path / "ex" / "manifest.json").exists()
        assert '"incidents"' in runs["summary"].stdout
        assert (tmp_path / "report.pdf").read_bytes().startswith(b"%PDF")
        assert (tmp_path / "pack" / "pack.pdf").exists()
        # the exports' chain heads are still on record (in the fixture's own trail)
        heads = matchday("heads", "--fixture", fx.id, env=env)
        assert heads.returncode == 0, heads.stderr
        assert heads.stdout.count("export.head") == 2, heads.stdout  # export, pack
    finally:
        ops.config_set("min-replicas-to-write", 0)
        ops.close()
        await store.close()
