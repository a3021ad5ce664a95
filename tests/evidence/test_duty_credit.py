"""The per-steward record credits the steward who acted, not the tabard holder of the post
he was seen at first (issue 36 §12): steward 14 covering tabard 15's post, standing down,
checking in at his own post and signing off is all steward 14's."""

from __future__ import annotations

import csv
import io
from datetime import timedelta

from bot.store.stewarding_keys import Stewarding
from tests.support.cli import matchday

ROTA = "steward id,name,post\n14,A. Smith,stb_250_gangway\n15,B. Jones,stb_256_gangway\n"


async def test_the_record_credits_the_actor(say, core, store, clock, redis_url,
                                           tmp_path) -> None:
    fx = (await core.active_fixture()).id  # type: ignore[union-attr]
    await say("/deploy import\n" + ROTA, as_="control")
    await say("/onpost stb_256_gangway", as_="steward")  # tabard 15's post, covering it
    clock.advance(timedelta(minutes=20))
    await say("/standdown", as_="steward")
    clock.advance(timedelta(minutes=5))
    await say("/onpost stb_250_gangway", as_="steward")  # his own
    await say("/briefing", as_="steward")
    version, _ = await Stewarding(store.gateway).briefing_acks(fx)
    assert (await say(f"/briefed {version}", as_="steward")).reply.ok
    env = {"REDIS_URL": redis_url, "MATCHDAY_DATA_DIR": str(tmp_path)}
    p = matchday("stewards", "--fixture", fx, "--csv", "--out", str(tmp_path / "r"), env=env)
    assert p.returncode == 0, p.stderr
    rows = {r["tabard"]: r for r in csv.DictReader(io.StringIO(p.stdout))}
    assert rows["15"]["checked_in"] == rows["15"]["stood_down"] == ""
    assert rows["15"]["briefing_signed_off"] == ""
    assert rows["14"]["checked_in"] == "2026-11-25T18:00:00+00:00", rows["14"]
    assert rows["14"]["stood_down"] == "2026-11-25T18:20:00+00:00"
    assert rows["14"]["briefing_version"] == version
