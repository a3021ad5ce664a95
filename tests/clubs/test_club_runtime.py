"""Two clubs on one deployment (`matchday run` with clubs registered), through the real
python-telegram-bot and slack-bolt code over HTTP to fakes serving both clubs' bots and
workspaces: each club's reports reach its own control room through its own bot only; a club
whose bot token is refused is down alone (503 on its routes, named in /healthz) while the
other runs; no club secret is ever logged (#39)."""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
from aiohttp import ClientSession

from bot.adapters.telegram.webhook import SECRET_HEADER
from bot.app import App
from bot.clubs.club_runtime import Deployment
from bot.core.roles import Member
from bot.domain.club_record import Club, SecretRef
from bot.domain.messages import Command
from bot.observe import metrics, redact
from bot.sample import ensure_sample_fixture
from bot.settings import load_settings
from bot.web.access import COOKIE
from bot.web.host import HttpHost
from rigs.fakes.slack_api import FakeSlack
from rigs.fakes.telegram_api import FakeTelegram

CONTROL = "-1001000000001"  # channels.toml: the Telegram control group (each club's bot)
SLACK_CONTROL = "C0CONTROL"
STEWARD = 700000101
# each club's secrets, as the environment holds them
ENV = {
    "NORTH_TG": "800000001:NORTHsecret-token-for-the-fake-api-tests",
    "NORTH_HOOK": "north-webhook-secret-3b1f",
    "NORTH_SLACK": "xoxb-north-club-token",
    "NORTH_SIGN": "north-signing-secret-77aa",
    "SOUTH_TG": "800000002:SOUTHsecret-token-for-the-fake-api-tests",
    "SOUTH_HOOK": "south-webhook-secret-9c2e",
    "SOUTH_SLACK": "xoxb-south-club-token",
    "SOUTH_SIGN": "south-signing-secret-41dd",
}
TEAMS = {"north": "T0NORTH", "south": "T0SOUTH"}
ADMIN = "deployment-super-admin-token-5e1"  # MATCHDAY_ADMIN_TOKEN


def club(club_id: str) -> Club:
    """A club whose secrets are named in ENV (NORTH_TG, NORTH_HOOK, ...)."""
    up = club_id.upper()
    return Club(club_id, club_id.title(), True, SecretRef("env", f"{up}_TG"),
                SecretRef("env", f"{up}_HOOK"), SecretRef("env", f"{up}_SLACK"),
                SecretRef("env", f"{up}_SIGN"))


@dataclass
class Rig:
    deployment: Deployment
    url: str  # the deployment's HTTP server
    telegram: FakeTelegram
    slack: FakeSlack
    http: ClientSession

    async def report(self, club_id: str, text: str, secret: str | None = None) -> int:
        """A steward's message to the club's bot, delivered to its webhook as Telegram
        does; the HTTP status the deployment answered."""
        update = self.telegram.message_update(STEWARD, text)
        hook = secret if secret is not None else ENV[f"{club_id.upper()}_HOOK"]
        async with self.http.post(f"{self.url}/c/{club_id}/telegram", json=update,
                                  headers={SECRET_HEADER: hook}) as resp:
            return resp.status


@asynccontextmanager
async def deployment(redis_url: str, tmp_path: Path, env: dict[str, str],
                     revoked: tuple[str, ...] = ()) -> AsyncIterator[Rig]:
    """North and south on one deployment over the test Redis, their bots and workspaces on
    the fakes (`revoked`: env names of Telegram tokens revoked before the start)."""
    telegram = FakeTelegram(enforce_limits=True)
    slack = FakeSlack(enforce_limits=True, bot_token="xoxb-first")
    for name in ("NORTH", "SOUTH"):
        telegram.add_bot(ENV[f"{name}_TG"])
        slack.add_workspace(TEAMS[name.lower()], ENV[f"{name}_SLACK"], ENV[f"{name}_SIGN"])
    for name in revoked:
        telegram.revoke(ENV[name])
    await telegram.start()
    await slack.start()
    settings = load_settings(REDIS_URL=redis_url, MATCHDAY_DATA_DIR=str(tmp_path), PORT=0,
                             TELEGRAM_BASE_URL=telegram.base_url, SLACK_API_URL=slack.api_url,
                             SLACK_RESPONSE_HOSTS="127.0.0.1", MATCHDAY_ADMIN_TOKEN=ADMIN)
    base = App(settings, serving=True)
    await base.start_store()
    await base.store.reset_for_tests()
    deploy = Deployment(base, [club("north"), club("south")], env, webhook=True, retry_s=3600)
    server = HttpHost(await deploy.site(), 0)
    await server.start()
    try:
        await deploy.start_chats()
        for run in deploy.runs:
            if run.app is not None and run.app.core is not None:
                core = run.app.core
                await ensure_sample_fixture(core)
                core.roster[f"telegram:{STEWARD}"] = Member(
                    "telegram", str(STEWARD), "steward", "Tabard 1", "seg_ne")
        async with ClientSession() as http:
            yield Rig(deploy, f"http://127.0.0.1:{server.port}", telegram, slack, http)
    finally:
        await server.stop()
        await deploy.stop()
        await base.stop()
        await telegram.stop()
        await slack.stop()


@pytest.fixture
def matchday_logging() -> Iterator[None]:
    """Log records masked as `matchday run` masks them (every secret the bot learns)."""
    redact.install()
    try:
        yield
    finally:
        redact.uninstall()


def naming(marker: str):  # type: ignore[no-untyped-def]
    """Calls whose text names `marker`."""
    def found(calls):  # type: ignore[no-untyped-def]
        return [c for c in calls if c.ok and marker in str(c.params.get("text"))]
    return found


async def test_each_clubs_reports_reach_its_own_control_room_by_its_own_bot(
        redis_url: str, tmp_path: Path) -> None:
    def logged(club_id: str) -> float:
        return metrics.REGISTRY.get_sample_value("matchday_reports_logged_total",
                                                 {"club": club_id}) or 0.0

    async with deployment(redis_url, tmp_path, ENV) as rig:
        assert [h.up for h in rig.deployment.health()] == [True, True]
        before = logged("north"), logged("south")
        assert await rig.report("north", "/incident fight at gate N-MARK-1") == 200
        assert await rig.report("south", "/incident medical at gate S-MARK-2") == 200
        north = rig.telegram.bot(ENV["NORTH_TG"])
        south = rig.telegram.bot(ENV["SOUTH_TG"])
        for bot, mark in ((north, "N-MARK-1"), (south, "S-MARK-2")):
            await bot.wait_for(lambda calls, m=mark: [  # type: ignore[misc]
                c for c in naming(m)(calls) if str(c.params.get("chat_id")) == CONTROL],
                timeout=20)
            await bot.wait_for(lambda calls: [  # the steward's own answer, from that bot
                c for c in naming("Logged INC-1")(calls)
                if str(c.params.get("chat_id")) == str(STEWARD)], timeout=20)
        # each club numbers its own incidents, and no bot ever carried the other's report
        assert not naming("S-MARK-2")(north.calls) and not naming("N-MARK-1")(south.calls)
        # /metrics counts per club (labels), each club's report once, under its own name
        assert (logged("north") - before[0], logged("south") - before[1]) == (1, 1)
        # and a club's /metrics shows its own samples only, never another club's figures
        async with rig.http.get(f"{rig.url}/c/north/metrics") as resp:
            shown = await resp.text()
        assert 'matchday_reports_logged_total{club="north"}' in shown
        assert 'club="south"' not in shown and "matchday_store_seconds" not in shown
        # Slack too: north's card in north's workspace (its blocks name the marker), and the
        # other workspace never sees it
        slack_north, slack_south = (rig.slack.workspace(TEAMS[c]) for c in ("north", "south"))

        def cards(ws: FakeSlack, mark: str) -> list[object]:
            return [c for c in ws.of("chat.postMessage")
                    if c.ok and c.params.get("channel") == SLACK_CONTROL and mark in str(c.params)]
        await slack_north.wait_for(lambda: cards(slack_north, "N-MARK-1"), timeout=20)
        await slack_south.wait_for(lambda: cards(slack_south, "S-MARK-2"), timeout=20)
        assert not cards(slack_south, "N-MARK-1") and not cards(slack_north, "S-MARK-2")


async def test_a_forged_or_other_clubs_webhook_secret_is_refused(
        redis_url: str, tmp_path: Path) -> None:
    async with deployment(redis_url, tmp_path, ENV) as rig:
        # south's secret on north's webhook: another club's bot cannot post into north
        assert await rig.report("north", "/incident X-FORGED", ENV["SOUTH_HOOK"]) == 403
        assert await rig.report("north", "/incident X-FORGED", "guess") == 403
        assert not naming("X-FORGED")(rig.telegram.calls)


async def test_a_club_whose_token_is_refused_is_down_alone(
        redis_url: str, tmp_path: Path, caplog, matchday_logging) -> None:  # type: ignore[no-untyped-def]
    caplog.set_level(logging.INFO)
    async with deployment(redis_url, tmp_path, ENV, revoked=("SOUTH_TG",)) as rig:
        health = {h.club_id: h for h in rig.deployment.health()}
        assert health["north"].up and not health["south"].up
        assert "Telegram refused the bot token" in health["south"].why
        async with rig.http.get(f"{rig.url}/healthz") as resp:  # a load balancer's view
            assert json.loads(await resp.text()) == {
                "status": "degraded", "clubs_up": 1, "clubs_down": 1}
        # the super-admin's: which club and why, with a bearer token, and nothing else
        for wrong in ({}, {"Authorization": "Bearer guess"},
                      {"Authorization": f"Bearer {ENV['NORTH_HOOK']}"}):
            async with rig.http.get(f"{rig.url}/deployment/health", headers=wrong) as resp:
                assert resp.status == 401
        async with rig.http.get(f"{rig.url}/deployment/health",
                                headers={"Authorization": f"Bearer {ADMIN}"}) as resp:
            assert resp.status == 200
            body = json.loads(await resp.text())
        assert body["status"] == "degraded" and body["clubs"]["north"]["up"] is True
        assert body["clubs"]["south"]["up"] is False
        assert metrics.REGISTRY.get_sample_value("matchday_club_up", {"club": "south"}) == 0
        assert metrics.REGISTRY.get_sample_value("matchday_club_up", {"club": "north"}) == 1
        # the super-admin's scraper: every club's figures, behind the same token
        async with rig.http.get(f"{rig.url}/deployment/metrics") as resp:
            assert resp.status == 401
        async with rig.http.get(f"{rig.url}/deployment/metrics",
                                headers={"Authorization": f"Bearer {ADMIN}"}) as resp:
            every = await resp.text()
        assert 'matchday_club_up{club="south"} 0.0' in every
        assert 'matchday_club_up{club="north"} 1.0' in every
        assert "INC" not in json.dumps(body)  # health only, never a club's content
        assert not [v for v in ENV.values() if v in json.dumps(body)]  # nor a secret
        assert await rig.report("south", "/incident fight at gate S-DOWN") == 503
        assert await rig.report("north", "/incident fight at gate N-STILL-UP") == 200
        await rig.telegram.bot(ENV["NORTH_TG"]).wait_for(naming("N-STILL-UP"), timeout=20)
        # the super-admin's token opens no club's content
        async with rig.http.get(f"{rig.url}/c/north/control/",
                                headers={"Authorization": f"Bearer {ADMIN}"}) as resp:
            assert resp.status == 401
        # south's control room still opens for its people: only its chats are down
        async with rig.http.get(f"{rig.url}/c/south/control/") as resp:
            assert resp.status == 401  # asks for a sign-in, served by south's own room
    logged = caplog.text
    assert "club south is down" in logged
    for secret in ENV.values():
        assert secret not in logged


async def test_a_club_with_a_missing_secret_is_down_and_names_the_reference_only(
        redis_url: str, tmp_path: Path, caplog, matchday_logging) -> None:  # type: ignore[no-untyped-def]
    caplog.set_level(logging.INFO)
    env = {k: v for k, v in ENV.items() if k != "SOUTH_SIGN"}
    async with deployment(redis_url, tmp_path, env) as rig:
        health = {h.club_id: h for h in rig.deployment.health()}
        assert health["north"].up and not health["south"].up
        assert "env:SOUTH_SIGN" in health["south"].why
        async with rig.http.get(f"{rig.url}/c/south/control/") as resp:
            assert resp.status == 503
        assert await rig.report("north", "/incident fight at gate N-FINE") == 200
    for secret in ENV.values():
        assert secret not in caplog.text


async def test_a_token_revoked_while_running_stops_only_that_club(
        redis_url: str, tmp_path: Path) -> None:
    async with deployment(redis_url, tmp_path, ENV) as rig:
        rig.telegram.revoke(ENV["NORTH_TG"])
        assert await rig.report("north", "/incident fight at gate N-AFTER-REVOKE") == 200
        assert await rig.report("south", "/incident medical at gate S-STILL-SENT") == 200
        south = rig.telegram.bot(ENV["SOUTH_TG"])
        await south.wait_for(lambda calls: [
            c for c in naming("S-STILL-SENT")(calls)
            if str(c.params.get("chat_id")) == CONTROL], timeout=20)
        # north's card is logged and kept for its bot (nothing sent by another club's bot)
        north_run = next(r for r in rig.deployment.runs if r.club.club_id == "north")
        assert north_run.app is not None and north_run.app.core is not None
        store = north_run.app.core.store
        open_now, _ = await store.open_incidents((await store.fixtures())[0].id)
        assert [i for i in open_now if "N-AFTER-REVOKE" in str(i)]
        assert not naming("N-AFTER-REVOKE")(south.calls)


async def test_one_clubs_sign_in_link_and_session_open_nothing_of_another(
        redis_url: str, tmp_path: Path) -> None:
    async with deployment(redis_url, tmp_path, ENV) as rig:
        north = next(r for r in rig.deployment.runs if r.club.club_id == "north")
        assert north.app is not None and north.app.core is not None
        asked = await north.app.core.handle(Command(
            platform="console", chat="control", user="control", text="/web",
            dedupe_key="web:north", private=True))
        assert asked is not None and "/c/north/control/login/" in asked.reply.text
        token = asked.reply.text.split("/c/north/control/login/")[1].split()[0]
        browser = {"Sec-Fetch-Site": "same-origin"}
        # north's one-time link, tried on south's room: unknown there (nothing used up)
        async with rig.http.post(f"{rig.url}/c/south/control/login/{token}",
                                 headers=browser) as resp:
            assert resp.status == 403
        async with rig.http.post(f"{rig.url}/c/north/control/login/{token}",
                                 headers=browser) as resp:
            assert resp.status == 200
            sid = resp.cookies[COOKIE].value
            assert resp.cookies[COOKIE]["path"] == "/c/north/control"
        async with rig.http.get(f"{rig.url}/c/north/control/",
                                headers={"Cookie": f"{COOKIE}={sid}"}) as resp:
            assert resp.status == 200
        # the same session id presented to south's room opens nothing there
        async with rig.http.get(f"{rig.url}/c/south/control/",
                                headers={"Cookie": f"{COOKIE}={sid}"}) as resp:
            assert resp.status == 401
