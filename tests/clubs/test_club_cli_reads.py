# ruff: noqa: F811  (pytest fixtures imported from tests.support)
"""`matchday --club ID <command>` reads one club's records and nothing of another's (#39): two
clubs hold a fixture of the same id, each with its own marker; every read command shows its
club's and never the other's; exports and packs name their club under the signature; an
unknown club, a write into a disabled club and --club on `run` are one-line refusals; without
--club the single-club deployment's records are read as before."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.store import Store
from tests.support.cli import (  # noqa: F401 (fixture)
    SCENARIO,
    assert_one_line_refusal,
    env,
    matchday,
)
from tests.support.club_records import (
    FIXTURE,
    SEASON,
    disable,
    register,
    team,
    write_records,
)

MARKERS = {"north": "Northmark", "south": "Southmark"}
INCIDENTS = {"north": 1, "south": 2}  # each club's own count, so its figures show whose
HOME = "Homemark"  # the single-club deployment's records, beside the clubs'


@pytest.fixture
async def clubs(store: Store, settings) -> Store:
    """north and south registered, each with its records; the deployment's own beside them."""
    for club, marker in MARKERS.items():
        await register(store, club)
        await write_records(Store(store.gateway.for_club(club)), settings, marker,
                            INCIDENTS[club])
    await write_records(store, settings, HOME, 3)
    return store


def other(club: str) -> str:
    """The other club's marker."""
    return next(m for c, m in MARKERS.items() if c != club)


def run_ok(*args: str, env: dict[str, str]) -> str:
    """Run matchday; it must succeed; its stdout and stderr."""
    p = matchday(*args, env=env)
    assert p.returncode == 0, p.stderr
    assert "Traceback" not in p.stdout + p.stderr
    return p.stdout + p.stderr


def folder_text(folder: Path) -> str:
    """Every file of an export or pack folder, as text (bytes that are not text dropped)."""
    return "\n".join(f.read_bytes().decode("utf-8", "ignore")
                     for f in sorted(folder.rglob("*")) if f.is_file())


@pytest.mark.parametrize("club", sorted(MARKERS))
def test_fixtures_summary_and_season_show_only_the_clubs_records(clubs, env, club):
    mine, theirs = MARKERS[club], other(club)
    listed = run_ok("--club", club, "fixtures", "--json", env=env)
    rows = json.loads(listed)
    assert [(r["id"], r["home"]) for r in rows] == [(FIXTURE, team(mine))]
    summary = run_ok("--club", club, "summary", "--fixture", FIXTURE, env=env)
    assert f"{team(mine)} v Visitors FC ({FIXTURE})" in summary
    figures = json.loads(run_ok("--club", club, "summary", "--fixture", FIXTURE, "--json",
                                env=env))
    assert figures["incidents"]["total"] == INCIDENTS[club]
    assert figures["arrests"]["total"] == 1
    # `season --club` stays the football club of the figures, beside the global --club
    season = run_ok("--club", club, "season", "--club", "Rovers", "--season", SEASON,
                    env=env)
    assert f"Season {SEASON} · {team(mine)}" in season
    for out in (listed, summary, season):
        assert theirs not in out and HOME not in out


@pytest.mark.parametrize("club", sorted(MARKERS))
def test_export_carries_the_club_under_its_signature(clubs, env, club, tmp_path):
    mine, theirs = MARKERS[club], other(club)
    out = tmp_path / f"{club}-export"
    run_ok("--club", club, "export", "--fixture", FIXTURE, "--out", str(out), env=env)
    text = folder_text(out)
    assert f"{mine} coins thrown 1" in text and theirs not in text and HOME not in text
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["club"] == club
    assert f"- Club: `{club}`" in (out / "report.md").read_text()
    verified = run_ok("verify", str(out), env=env)
    assert verified.startswith("OK: ") and f"the records of club {club}" in verified
    # the club is signed: naming another club breaks the signature
    manifest["club"] = "south" if club == "north" else "north"
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    forged = matchday("verify", str(out), env=env)
    assert forged.returncode == 1 and "FAILED" in forged.stdout


@pytest.mark.parametrize("club", sorted(MARKERS))
def test_pack_and_stewards_of_a_club(clubs, env, club, tmp_path):
    mine, theirs = MARKERS[club], other(club)
    pack = tmp_path / f"{club}-pack"
    run_ok("--club", club, "pack", "--fixture", FIXTURE, "--out", str(pack), env=env)
    manifest = json.loads((pack / "manifest.json").read_text())
    assert manifest["club"] == club and manifest["pack"]["fixture_title"].startswith(mine)
    text = folder_text(pack)
    assert f"{mine} coins thrown 1" in text and theirs not in text and HOME not in text
    assert f"the records of club {club}" in run_ok("verify", str(pack), env=env)
    season_pack = tmp_path / f"{club}-season"
    run_ok("--club", club, "pack", "--season", SEASON, "--out", str(season_pack), env=env)
    assert json.loads((season_pack / "manifest.json").read_text())["club"] == club
    assert theirs not in folder_text(season_pack)
    stewards = tmp_path / f"{club}-stewards"
    out = run_ok("--club", club, "stewards", "--fixture", FIXTURE, "--out", str(stewards),
                 env=env)
    assert "of 1 fixture(s)" in out
    record = json.loads((stewards / "manifest.json").read_text())
    assert record["club"] == club and record["fixtures"] == [FIXTURE]
    assert theirs not in folder_text(stewards)


@pytest.mark.parametrize("club", sorted(MARKERS))
def test_report_pdf_of_a_club(clubs, env, tmp_path, club):
    pdf = tmp_path / f"{club}.pdf"
    out = run_ok("--club", club, "report", "--fixture", FIXTURE, "--pdf", "--out", str(pdf),
                 env=env)
    assert f"({INCIDENTS[club]} incidents;" in out and pdf.stat().st_size > 0


def test_without_club_the_deployment_reads_its_own_records_as_before(clubs, env, tmp_path):
    rows = json.loads(run_ok("fixtures", "--json", env=env))
    assert [(r["id"], r["home"]) for r in rows] == [(FIXTURE, team(HOME))]
    out = tmp_path / "export"
    run_ok("export", "--fixture", FIXTURE, "--out", str(out), env=env)
    text = folder_text(out)
    assert HOME in text and not any(m in text for m in MARKERS.values())
    assert "club" not in json.loads((out / "manifest.json").read_text())  # as it always was
    verified = run_ok("verify", str(out), env=env)
    assert verified.startswith("OK: ") and "club" not in verified


def test_an_unknown_club_is_refused_in_one_line(clubs, env):
    assert_one_line_refusal(matchday("--club", "west", "fixtures", env=env),
                            "no club 'west'", "matchday club list")
    assert_one_line_refusal(matchday("--club", "No/Club", "fixtures", env=env),
                            "not a club id")


async def test_a_disabled_clubs_records_can_be_read_not_written(clubs, env, tmp_path):
    await disable(clubs, "south")
    rows = json.loads(run_ok("--club", "south", "fixtures", "--json", env=env))
    assert [r["home"] for r in rows] == [team("Southmark")]
    out = tmp_path / "south-export"
    run_ok("--club", "south", "export", "--fixture", FIXTURE, "--out", str(out), env=env)
    assert json.loads((out / "manifest.json").read_text())["club"] == "south"
    refused = matchday("--club", "south", "replay", str(SCENARIO), env=env)
    assert_one_line_refusal(refused, "club south is disabled", "replay")
    # nothing was written: no drill fixture in the club's key space
    drills = await Store(clubs.gateway.for_club("south")).fixtures(drill=True)
    assert drills == []
    # an enabled club takes the same replay, into its own key space only
    run_ok("--club", "north", "replay", str(SCENARIO), "--json", env=env)
    assert await Store(clubs.gateway.for_club("north")).fixtures(drill=True)
    assert await clubs.fixtures(drill=True) == []


@pytest.mark.parametrize(("command", "why"), [
    (("run",), "serves every enabled club"), (("check-config",), "every club"),
    (("club", "list"), "name their club"), (("keys",), "the installation's"),
    (("demo",), "throwaway store"), (("verify", "."), "files only")])
def test_club_makes_no_sense_for_deployment_commands(env, command, why):
    assert_one_line_refusal(matchday("--club", "north", *command, env=env),
                            "--club does not go with", f"`{command[0]}`", why)
