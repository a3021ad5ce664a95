"""Evidence export: hash-chained JSON Lines + CSV + report; verify names the first altered,
removed or inserted event; custody refs only in the restricted export."""

import json

from bot.evidence.export import export_fixture
from bot.evidence.signing import new_key
from bot.evidence.verify import verify_dir


async def _matchday(say) -> None:
    await say("/incident missile @seg_ne s4 coins", as_="steward")
    await say("/ack 1", as_="control")
    await say("/arrest throwing_missiles x2 inside away ref=CUS/77 inc=1", as_="police_liaison")
    await say("/ban club_lifetime ref=CLUB/9 inc=1", as_="safety_officer")
    await say("/resolve 1 cleared", as_="control")


async def test_export_verifies_and_keeps_custody_refs_out(say, core, tmp_path):
    await _matchday(say)
    fx = await core.active_fixture()
    out = await export_fixture(core.store, core.facades, fx.id, tmp_path / "ex", restricted=False,
                               key=new_key())
    result = verify_dir(out)
    assert result.ok, result
    assert result.events == len(await core.store.events(fx.id))
    names = {p.name for p in out.iterdir()}
    assert names == {"events.jsonl", "events.csv", "report.md", "manifest.json"}
    everything = "".join(p.read_text() for p in out.iterdir())
    assert "CUS/77" not in everything and "CLUB/9" not in everything
    rows = [json.loads(x) for x in (out / "events.jsonl").read_text().splitlines()]
    assert rows[1]["prev"] == rows[0]["hash"] and len(rows[0]["hash"]) == 64
    report = (out / "report.md").read_text()
    assert "INC-1" in report and "Time to acknowledge" in report and result.head in report


async def test_restricted_export_carries_refs_and_is_audited(say, core, tmp_path):
    await _matchday(say)
    fx = await core.active_fixture()
    out = await export_fixture(core.store, core.facades, fx.id, tmp_path / "r", restricted=True,
                               by="cli:dfo",
                               key=new_key())
    assert verify_dir(out).ok
    refs = [json.loads(x) for x in (out / "custody_refs.jsonl").read_text().splitlines()]
    assert [(r["record"], r["ref"]) for r in refs] == [("A-1", "CUS/77"), ("B-1", "CLUB/9")]
    assert "CUS/77" not in (out / "events.jsonl").read_text()
    assert any(a["action"] == "export.restricted"
               for a in await core.facades.audit.audit_log(fixture=fx.id))


def _lines(path):
    return path.read_text().splitlines(keepends=True)


async def test_verify_names_an_edited_a_deleted_and_an_inserted_line(say, core, tmp_path):
    await _matchday(say)
    fx = await core.active_fixture()
    out = await export_fixture(core.store, core.facades, fx.id, tmp_path / "t", restricted=False,
                               key=new_key())
    jl = out / "events.jsonl"
    original = _lines(jl)

    jl.write_text("".join(original[:3] + [original[3].replace("coins", "c0ins")
                                          if "coins" in original[3] else
                                          original[3].replace('"role":"', '"role":"x')]
                          + original[4:]))
    r = verify_dir(out)
    assert not r.ok and r.problem == "altered" and r.seq == 4 and r.line == 4, r

    jl.write_text("".join(original[:2] + original[3:]))
    r = verify_dir(out)
    assert not r.ok and r.problem == "removed" and r.seq == 3, r
    assert "event 3 was removed" in r.message

    forged = json.loads(original[2])
    forged["data"] = {"id": "INC-1", "text": "nothing happened"}
    jl.write_text("".join(original[:2] + [json.dumps(forged) + "\n"] + original[2:]))
    r = verify_dir(out)
    assert not r.ok and r.problem == "inserted" and r.line == 3, r

    jl.write_text("".join(original[:-1]))  # the last event cut off
    r = verify_dir(out)
    assert not r.ok and r.problem == "removed", r

    jl.write_text("".join(original))
    csv_path = out / "events.csv"
    rows = _lines(csv_path)
    csv_path.write_text("".join(rows[:2] + rows[3:]))  # header + event 1, then event 3
    r = verify_dir(out)
    assert not r.ok and r.file == "events.csv" and r.problem == "removed" and r.seq == 2, r

    csv_path.write_text("".join(rows))
    assert verify_dir(out).ok
    (out / "report.md").write_text("# nothing to see\n")
    r = verify_dir(out)
    assert not r.ok and r.file == "report.md"


def test_cli_export_then_verify(core, tmp_path, redis_url):
    # (the core fixture created the sample fixture in this Redis)
    from tests.support.cli import matchday

    env = {"REDIS_URL": redis_url, "MATCHDAY_DATA_DIR": str(tmp_path / "data")}
    fixtures = matchday("fixtures", "--json", env=env)
    fx_id = json.loads(fixtures.stdout)[0]["id"]
    p = matchday("export", "--fixture", fx_id, "--out", str(tmp_path / "x"), env=env)
    assert p.returncode == 0, p.stderr
    p = matchday("verify", str(tmp_path / "x"), env=env)
    assert p.returncode == 0 and p.stdout.startswith("OK:"), p.stdout + p.stderr
    (tmp_path / "x" / "events.jsonl").write_text("")
    p = matchday("verify", str(tmp_path / "x"), env=env)
    assert p.returncode == 1 and "FAILED" in p.stdout
