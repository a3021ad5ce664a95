"""Briefing content from stored history, the steward version, and the summary's figures."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest

from bot.app import StartupError, build_core
from bot.core.roles import DEFAULT_ROLES
from bot.domain.ledger import median, recount
from bot.domain.vocab import ROLES
from bot.evidence.summary import figures_from_counts, summary_figures
from bot.sample import ensure_sample_fixture
from handlers.briefings.briefing_content import briefing_outbounds, briefing_replies, summary_reply
from tests.support.briefings import (  # noqa: F401 (fixtures)
    history,
    run,
)


async def test_full_briefing_from_stored_history(core, say):
    await history(say, core)
    fx = await core.active_fixture()
    full, _ = await briefing_replies(core, core.store, fx, "T-3h")
    text = full.text
    assert "Briefing T-3h · West Ham United v Chelsea" == full.title
    assert "Kick-off Wed 25 Nov 19:45 (GMT)" in text
    assert "history of disorder between the clubs" in text  # category and why
    assert "Attendance 62500 · away allocation 3000" in text
    assert "Segregation: Away fans north-east corner" in text
    assert "Alcohol: No alcohol in view" in text and "Pyrotechnics: Search regime" in text
    assert "Risk groups: 2 home risk groups (approx. 60)" in text
    # history between the clubs (both meetings, both seasons), oldest first
    assert text.index("01 Mar 2026 West Ham United v Chelsea") \
        < text.index("20 Sep 2026 Chelsea v West Ham United")
    assert "20 Sep 2026 Chelsea v West Ham United (cat C): 3 incidents (alcohol 1, " \
           "throwing missiles 1, pyrotechnics 1), 3 arrests, 4 bans" in text
    # recent fixtures at this ground: not the away game at Chelsea
    ground = text[text.index("Recent fixtures at this ground"):text.index("Season 2026-27")]
    assert "West Ham United v Arsenal: 1 incident (pyrotechnics 1), 1 arrest" in ground
    assert "Chelsea v West Ham United" not in ground
    # season to date, by Home Office category, for both clubs (last season excluded)
    season = text[text.index("Season 2026-27"):]
    assert "West Ham United (2 fixtures): arrests 3 (throwing missiles 2, possession of " \
           "pyrotechnics 1); banning orders 4 new, 3 in force" in season
    # bans count for the club whose supporters were banned, not for both clubs
    assert "Chelsea (1 fixtures): arrests 1 (public disorder 1); banning orders 0 new" in season
    assert "Key contacts: Safety Officer ch.1" in text


async def test_steward_version_has_no_intelligence(core, say):
    await history(say, core)
    fx = await core.active_fixture()
    fx.notes["intel"] = "away group plans to meet at Stratford"
    full, stewards = await briefing_replies(core, core.store, fx)
    assert "away group plans" in full.text
    for secret in ("Risk groups", "risk group", "RISK ASSESSMENT", "History", "arrests",
                   "history of disorder", "away group plans", "banning"):
        assert secret not in stewards.text, secret
    assert "Segregation:" in stewards.text and "Kick-off" in stewards.text
    assert stewards.title.endswith("stewards")
    outs = await briefing_outbounds(core, core.store, fx, "T-3h")
    by = {o.audience: o.reply for o in outs}
    assert by["command"] is by["police"] and "Risk groups" in by["command"].text
    assert "Risk groups" not in by["stewards"].text


async def test_briefing_command_by_role(core, say):
    r = await say("/briefing", as_="steward")
    assert r.reply.ok and "Risk groups" not in r.reply.text and "Segregation" in r.reply.text
    r = await say("/briefing", as_="police_commander")
    assert "Risk groups" in r.reply.text
    r = await say("/briefing send", as_="steward")
    assert not r.reply.ok
    sent = []
    core.notifier.taps.append(lambda out: _append(sent, out))
    r = await say("/briefing send", as_="safety_officer")
    assert r.reply.ok, r.reply.text
    assert {o.audience for o in sent} == {"command", "police", "stewards"}


async def _append(sent: list, out) -> None:
    sent.append(out)


async def test_summary_figures_equal_recount(core, say, clock):
    fx = await core.active_fixture()
    await run(say, "/incident missile @stb_walkway s4", "/incident pyro @stb_upper s3",
              "/incident medical @stb_lower s2", "/incident ejection @stb_upper s1",
              as_="steward")
    clock.advance(__import__("datetime").timedelta(seconds=75))
    await run(say, "/ack 1", "/ack 2", "/resolve 2 out", "/resolve 4")
    await run(say, "/arrest missiles x2 inside away", "/arrest pyro outside home",
              "/ban club_season status=active", as_="police_liaison")
    fig = await summary_figures(core.store, core.facades, fx)
    tally = recount(await core.store.events(fx.id))
    assert {k: v for k, v in fig.items() if k in ("incidents", "arrests", "bans", "ejections")} \
        == figures_from_counts(dict(tally.counts))
    rt = fig["response_times"]
    assert rt["median_ack_s"] == median(list(tally.ack_seconds.values()))
    assert rt["worst_close_s"] == max(tally.close_seconds.values())
    reply = await summary_reply(core, core.store, core.facades, fx)
    assert "Arrests: 3 (inside 2, outside 1; home 1, away 2)" in reply.text
    assert reply.images and reply.images[0].startswith(b"\x89PNG")
    r = await say("/summary", as_="police_commander")
    assert r.reply.images and r.reply.text == reply.text


async def test_summary_late_title(core):
    fx = await core.active_fixture()
    reply = await summary_reply(core, core.store, core.facades, fx,
                                late_due=datetime(2026, 11, 25, 21, 50, tzinfo=UTC))
    assert reply.title.endswith("LATE (was due 21:50)")
    assert reply.images == []  # nothing happened: no chart


# ------------------------------------------------------------------ issue 10, item 22
INTEL_READERS = {"control", "safety_officer", "police_commander", "police_liaison", "admin"}


@pytest.mark.parametrize("role", ROLES.keys())
async def test_only_command_police_and_safety_roles_read_the_restricted_part(core, say, role):
    await say("/fixture note intel away group plans to meet at Stratford", as_="admin")
    r = await say("/briefing", as_=role)
    assert r.reply.ok and "Kick-off" in r.reply.text
    restricted = "RISK ASSESSMENT" in r.reply.text or "away group plans" in r.reply.text
    assert restricted == (role in INTEL_READERS), (role, r.reply.text)


def channels_with(tmp_path: Path, edit) -> Path:
    cfg = tmp_path / "config"
    shutil.copytree(DEFAULT_ROLES.parent, cfg)
    path = cfg / "channels.toml"
    path.write_text(edit(path.read_text()))
    return cfg


async def scheduled(store, settings, clock, cfg: Path) -> dict[str, str]:
    """audience -> briefing text, as the scheduler would send it, under a config folder."""
    core = build_core(store, settings, clock, config_dir=cfg, cache_ttl=0)
    await ensure_sample_fixture(core)
    fx = await core.active_fixture()
    outs = await briefing_outbounds(core, core.store, fx, "T-3h")
    return {o.audience: o.reply.text for o in outs}


async def test_scheduled_briefings_keep_intelligence_from_chats_a_viewer_reads(
        store, settings, clock, tmp_path):
    sent = await scheduled(store, settings, clock, channels_with(tmp_path / "a", str))
    assert "RISK ASSESSMENT" in sent["command"] and "RISK ASSESSMENT" in sent["police"]
    assert "RISK ASSESSMENT" not in sent["stewards"]
    # SAG viewers sit in the command channel: it gets the version without intelligence.
    viewers = channels_with(tmp_path / "b", lambda t: t.replace(
        'readers = ["safety_officer", "police_commander", "control"]\ntelegram',
        'readers = ["safety_officer", "police_commander", "control", "viewer"]\ntelegram', 1))
    sent = await scheduled(store, settings, clock, viewers)
    assert "RISK ASSESSMENT" not in sent["command"] and "Kick-off" in sent["command"]
    assert "RISK ASSESSMENT" in sent["police"]
    # A viewer in the summary audience shares the command group chat on Telegram.
    shared = channels_with(tmp_path / "c", lambda t: t.replace(
        '[audiences.summary]\nreaders = ["safety_officer", "police_commander", "control"]',
        '[audiences.summary]\nreaders = ["safety_officer", "police_commander", "viewer"]'))
    sent = await scheduled(store, settings, clock, shared)
    assert "RISK ASSESSMENT" not in sent["command"]
    # Readers not declared: nobody is known to be cleared for it.
    undeclared = channels_with(tmp_path / "d", lambda t: t.replace(
        'readers = ["police_liaison", "police_commander"]\n', ''))
    sent = await scheduled(store, settings, clock, undeclared)
    assert "RISK ASSESSMENT" not in sent["police"] and "RISK ASSESSMENT" in sent["command"]


async def test_an_unknown_reader_role_stops_the_start(store, settings, clock, tmp_path):
    cfg = channels_with(tmp_path, lambda t: t.replace('"viewer"', '"viewr"').replace(
        'readers = ["steward", "supervisor"]', 'readers = ["steward", "supervisr"]'))
    with pytest.raises(StartupError, match="unknown reader role 'supervisr'"):
        build_core(store, settings, clock, config_dir=cfg)
