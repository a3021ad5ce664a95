"""The Slack app manifest declares the command language, scopes, events and interactivity."""

from __future__ import annotations

import re

from bot.app import build_registry
from bot.settings import PROJECT_CONFIG

MANIFEST = (PROJECT_CONFIG / "slack_manifest.yaml").read_text()
NOT_SLASH = {"fixtures"}  # reachable as /matchday fixtures


def test_manifest_matches_the_command_language() -> None:
    declared = set(re.findall(r"- command: /(\w+)", MANIFEST))
    registry = build_registry()
    for name in declared - {"matchday"}:
        assert registry.lookup(name) is not None, f"/{name} has no handler"
    visible = {s.name for s in registry.specs.values() if not s.hidden}
    assert visible - NOT_SLASH <= declared
    assert {"incident", "ack", "update", "resolve", "escalate", "arrest", "ban", "status",
            "briefing", "summary", "season", "fixture", "phase", "methane", "invite", "join",
            "whoami", "help"} <= declared


def test_manifest_scopes_events_and_modes() -> None:
    for scope in ("commands", "chat:write", "files:write", "im:history", "im:write",
                  "users:read", "app_mentions:read"):
        assert f"      - {scope}\n" in MANIFEST
    for event in ("app_home_opened", "message.im", "app_mention"):
        assert f"      - {event}\n" in MANIFEST
    assert "interactivity:\n    is_enabled: true" in MANIFEST
    assert "socket_mode_enabled: true" in MANIFEST
    assert "home_tab_enabled: true" in MANIFEST
    assert set(re.findall(r"url: (\S+)", MANIFEST)) == {"https://bot.example.org/slack/events"}


def test_ban_modal_records_whose_supporters():
    from bot.adapters.slack.modals import BAN

    cmd = BAN.to_command({"type": "club_lifetime", "count": "4", "side": "away", "inc": "INC-7"})
    assert cmd.startswith("/ban club_lifetime x4 away")
    assert "inc=7" in cmd or "inc=INC-7" in cmd
