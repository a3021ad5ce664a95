"""The Slack app manifests (Socket Mode and HTTP) declare the command language under names
Slack accepts, only the scopes the adapter uses, and settings that match the Procfile."""

from __future__ import annotations

import re
from typing import Any

import yaml

from bot.adapters.slack.listeners.commands import command_text
from bot.app import build_registry
from bot.settings import PROJECT_CONFIG

SOCKET = yaml.safe_load((PROJECT_CONFIG / "slack_manifest.yaml").read_text())
HTTP = yaml.safe_load((PROJECT_CONFIG / "slack_manifest.http.yaml").read_text())
PROCFILE = (PROJECT_CONFIG.parent / "Procfile").read_text()
# Slack's built-in slash commands (help.slack.com "Use shortcuts / slash commands", and the
# names other projects report Slack rejecting a manifest for): none may be ours.
BUILT_IN = {"/active", "/away", "/apps", "/archive", "/call", "/collapse", "/dm", "/dnd",
            "/expand", "/feed", "/feedback", "/giphy", "/help", "/invite", "/join", "/kick",
            "/leave", "/me", "/msg", "/mute", "/open", "/prefs", "/remind", "/remove",
            "/rename", "/search", "/settings", "/shortcuts", "/shrug", "/star", "/status",
            "/topic", "/who", "/whois", "/workflows"}
# Field limits from the app manifest reference (https://docs.slack.dev/reference/app-manifest):
# slash command names at most 32 characters with the leading "/", descriptions 2,000,
# usage hints 1,000; display name 35, short description 140, long description 174-4,000;
# bot display name 80, of a-z 0-9 - _ . only.
COMMAND = re.compile(r"/[a-z0-9_-]{1,31}")
BOT_NAME = re.compile(r"[a-z0-9._-]{1,80}")
UNUSED_SCOPES = {"users:read", "im:read", "files:read"}


def commands(manifest: dict[str, Any]) -> list[dict[str, Any]]:
    return manifest["features"]["slash_commands"]


def test_command_names_avoid_built_ins_and_keep_to_the_limits() -> None:
    for manifest in (SOCKET, HTTP):
        names = [c["command"] for c in commands(manifest)]
        assert len(names) == len(set(names))
        assert not set(names) & BUILT_IN, set(names) & BUILT_IN
        for c in commands(manifest):
            assert COMMAND.fullmatch(c["command"]), c["command"]
            assert 0 < len(c["description"]) <= 2000
            assert len(c.get("usage_hint", "")) <= 1000
            assert c.get("should_escape") is False  # the adapter reads raw text
        info = manifest["display_information"]
        assert 0 < len(info["name"]) <= 35 and len(info.get("description", "")) <= 140
        assert "long_description" not in info or 174 <= len(info["long_description"]) <= 4000
        assert re.fullmatch(r"#[0-9a-fA-F]{6}", info["background_color"])
        assert BOT_NAME.fullmatch(manifest["features"]["bot_user"]["display_name"])


def test_every_command_is_declared_and_reaches_its_handler() -> None:
    """/matchday is the catch-all; /md-<name> exists for every visible command (the missing
    /fixtures included), and each declared name resolves to a handler."""
    registry = build_registry()
    visible = {s.name for s in registry.specs.values() if not s.hidden}
    for manifest in (SOCKET, HTTP):
        declared = {c["command"] for c in commands(manifest)}
        assert "/matchday" in declared
        assert {f"/md-{n}" for n in visible} <= declared
        for slash in declared - {"/matchday"}:
            name, _ = command_text(slash, "")
            assert registry.lookup(name) is not None, slash
    assert command_text("/matchday", "status") == ("status", "")
    assert command_text("/matchday", "") == ("help", "")
    assert command_text("/MD-Incident", "pyro @x") == ("incident", "pyro @x")


def test_scopes_are_the_ones_used() -> None:
    for manifest in (SOCKET, HTTP):
        scopes = set(manifest["oauth_config"]["scopes"]["bot"])
        assert not scopes & UNUSED_SCOPES
        assert {"commands", "chat:write", "files:write", "im:history",
                "app_mentions:read"} <= scopes
        # reading history back: a post a crash left in doubt is looked up, not repeated
        assert {"channels:history", "groups:history"} <= scopes
        # the flashpoint board is pinned (pins.add/remove); a DM's history is read through
        # conversations.open (im:write)
        assert {"pins:write", "im:write"} <= scopes
        events = set(manifest["settings"]["event_subscriptions"]["bot_events"])
        assert events == {"app_home_opened", "app_mention", "message.im"}
        assert manifest["settings"]["interactivity"]["is_enabled"] is True
        assert manifest["features"]["app_home"]["home_tab_enabled"] is True


def test_modes_match_the_procfile() -> None:
    """worker: (Socket Mode, no public URL) uses slack_manifest.yaml; web: (--http, POST
    /slack/events) uses slack_manifest.http.yaml, every URL pointing at that endpoint."""
    assert re.search(r"^worker: matchday run$", PROCFILE, re.M)
    assert re.search(r"^web: (?:[A-Z_]+=\S+ )*matchday run .*--http", PROCFILE, re.M)
    assert SOCKET["settings"]["socket_mode_enabled"] is True
    assert "request_url" not in SOCKET["settings"]["event_subscriptions"]
    assert "request_url" not in SOCKET["settings"]["interactivity"]
    assert all("url" not in c for c in commands(SOCKET))
    assert HTTP["settings"]["socket_mode_enabled"] is False
    urls = {HTTP["settings"]["event_subscriptions"]["request_url"],
            HTTP["settings"]["interactivity"]["request_url"]} | {c["url"] for c in commands(HTTP)}
    assert len(urls) == 1 and urls.pop().endswith("/slack/events")
    # the two manifests declare the same app
    assert [c["command"] for c in commands(SOCKET)] == [c["command"] for c in commands(HTTP)]
    assert SOCKET["oauth_config"] == HTTP["oauth_config"]


def test_ban_modal_records_whose_supporters():
    from bot.adapters.slack.modals import BAN

    cmd = BAN.to_command({"type": "club_lifetime", "count": "4", "side": "away", "inc": "INC-7"})
    assert cmd.startswith("/ban club_lifetime x4 away")
    assert "inc=7" in cmd or "inc=INC-7" in cmd
