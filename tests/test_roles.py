"""The role × command matrix, strangers, and the audit trail of refusals."""

from __future__ import annotations

import pytest

from bot.core.roles import PERMISSIONS, allowed
from bot.domain.vocab import ROLES

# A representative, valid invocation of each command.
PROBES = {
    "incident": "/incident medical @bms_lower s2",
    "ack": "/ack 1",
    "resolve": "/resolve 1",
    "arrest": "/arrest public_disorder",
    "ban": "/ban club_season",
    "status": "/status",
    "summary": "/summary",
    "phase": "/phase gates",
    "fixture": "/fixture category B",
    "invite": "/invite viewer",
    "whoami": "/whoami",
    "help": "/help",
}


@pytest.mark.parametrize("role", ROLES.keys())
@pytest.mark.parametrize("command", sorted(PROBES))
async def test_matrix(say, core, role, command):
    if command in ("ack", "resolve"):
        await say("/incident medical @bms_lower s2", as_="steward")
    r = await say(PROBES[command], as_=role)
    if allowed(role, command):
        assert "not for your role" not in r.reply.text, (role, command, r.reply.text)
    else:
        assert not r.reply.ok and "not for your role" in r.reply.text, (role, command)
        audit = await core.store.audit_log(5)
        assert audit[0]["who"] == f"console:{role}" and audit[0]["action"] == "refused"


def test_matrix_shape():
    assert allowed("steward", "incident") and not allowed("steward", "ack")
    assert not allowed("steward", "arrest") and allowed("police_liaison", "arrest")
    assert not allowed("viewer", "incident") and allowed("viewer", "status")
    assert not allowed("police_commander", "phase")
    assert all(allowed("admin", c) for c in ("fixture", "invite", "phase"))
    assert set(PERMISSIONS["help"]) == set(ROLES.keys())


@pytest.mark.parametrize("text", ["/status", "/incident fire @ws", "/arrest vd", "/ack 1",
                                  "/summary", "/phase gates", "/fixture use x"])
async def test_strangers_can_do_nothing_but_join_and_help(core, text):
    from tests.conftest import Chat

    say = Chat(core)
    r = await say(text, as_="U999", platform="slack")
    assert not r.reply.ok and "not registered" in r.reply.text
    assert (await say("/help", as_="U999", platform="slack")).reply.ok
    fx = await core.active_fixture()
    assert await core.store.counts(fx.id) == {}


async def test_strangers_chatter_in_groups_is_ignored(core):
    from tests.conftest import Chat

    say = Chat(core)
    assert await say("/nonsense", as_="U999", platform="slack", private=False) is None
