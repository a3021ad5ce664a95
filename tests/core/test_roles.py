"""The role × command matrix, strangers, and the audit trail of refusals."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from bot.app import StartupError, build_core
from bot.core.roles import DEFAULT_ROLES, RolesError, load_role_matrix
from bot.domain.vocab import ROLES
from tests.conftest import Chat

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
    if core.roles.allowed(role, command, "category" if command == "fixture" else None):
        assert "not for your role" not in r.reply.text, (role, command, r.reply.text)
    else:
        assert not r.reply.ok and "not for your role" in r.reply.text, (role, command)
        audit = await core.facades.audit.audit_log(5)
        assert audit[0]["who"] == f"console:{role}" and audit[0]["action"] == "refused"


async def test_matrix_shape(core):
    allowed = core.roles.allowed
    assert allowed("steward", "incident") and not allowed("steward", "ack")
    assert not allowed("steward", "arrest") and allowed("police_liaison", "arrest")
    assert not allowed("viewer", "incident") and allowed("viewer", "status")
    assert not allowed("police_commander", "phase") and allowed("control", "phase")
    assert all(allowed("admin", c) for c in ("fixture", "invite", "phase"))
    assert all(allowed(r, "help") for r in ROLES.keys())
    # DOMAIN: fixtures, invites and the roster are the admin's.
    for role in set(ROLES.keys()) - {"admin"}:
        assert not allowed(role, "invite"), role
        for sub in ("add", "kickoff", "cancel", "category", "note", None):  # "use": your own
            assert not allowed(role, "fixture", sub), (role, sub)
    assert allowed("control", "fixture", "list") and not allowed("steward", "fixture", "list")
    assert allowed("control", "briefing", "send") and not allowed("viewer", "briefing", "send")
    assert not allowed("police_commander", "briefing", "send")


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


# ------------------------------------------------------------------ issue 10, item 21
@pytest.mark.parametrize("role", ["control", "safety_officer", "supervisor", "police_liaison",
                                  "police_commander", "viewer", "steward"])
@pytest.mark.parametrize("text", ["/fixture add Arsenal v Spurs 2027-03-14 16:30 cat=C",
                                  "/fixture kickoff 2026-11-25 20:00",
                                  "/fixture ko 2026-11-25 20:00",
                                  "/fixture cancel", "/fixture category A calm",
                                  "/fixture cat A", "/fixture note intel planted",
                                  "/invite police_liaison", "/invite safety_officer",
                                  "/invite viewer"])
async def test_fixtures_and_invites_are_admin_only(say, core, role, text):
    before = await core.active_fixture()
    r = await say(text, as_=role)
    assert not r.reply.ok and "not for your role" in r.reply.text, r.reply.text
    fx = await core.active_fixture()
    assert fx == before and len(await core.store.fixtures()) == 1
    [entry] = await core.facades.audit.audit_log(1)
    assert entry["who"] == f"console:{role}" and entry["action"] == "refused"
    assert entry["detail"].endswith(f"as {role}: role")


async def test_a_joined_account_gets_exactly_the_invited_role(say, core):
    r = await say("/invite viewer", as_="admin")
    code = r.reply.text.split("/join ")[1].split()[0]
    r = await say(f"/join {code}", as_="second", platform="telegram")
    assert r.reply.ok and "Viewer" in r.reply.text
    assert "Viewer" in (await say("/whoami", as_="second", platform="telegram")).reply.text
    for text in ("/arrest public_disorder", "/ban club_season", "/incident fire @ws_concourse",
                 "/invite viewer"):
        r = await say(text, as_="second", platform="telegram")
        assert not r.reply.ok and "not for your role (Viewer)" in r.reply.text, text
    assert (await say("/status", as_="second", platform="telegram")).reply.ok
    fx = await core.active_fixture()
    assert await core.store.counts(fx.id) == {}
    actions = [(a["action"], a["detail"]) for a in await core.facades.audit.audit_log(20)]
    assert ("invite", "viewer") in actions and ("joined", "viewer") in actions


def config_with(tmp_path: Path, roles_toml: str | None = None) -> Path:
    """A copy of the project's config folder, with another roles.toml."""
    cfg = tmp_path / "config"
    shutil.copytree(DEFAULT_ROLES.parent, cfg)
    if roles_toml is not None:
        (cfg / "roles.toml").write_text(roles_toml)
    return cfg


def granting(role: str, *rights: str) -> str:
    """The shipped roles.toml with extra rights for one role."""
    text = DEFAULT_ROLES.read_text()
    head = f"[roles.{role}]"
    start = text.index(head)
    at = text.index("can = [", start) + len("can = [")
    return text[:at] + "".join(f'"{r}", ' for r in rights) + text[at:]


async def test_nobody_invites_a_role_above_their_own(store, settings, clock, tmp_path):
    cfg = config_with(tmp_path, granting("control", "invite"))
    core = build_core(store, settings, clock, config_dir=cfg, cache_ttl=0)
    say = Chat(core)
    for role in ("steward", "supervisor", "viewer", "control"):
        r = await say(f"/invite {role}", as_="control")
        assert r.reply.ok and "/join " in r.reply.text, (role, r.reply.text)
    # above control, or with rights control lacks (arrests): refused, audited, no code
    for role in ("admin", "safety_officer", "police_commander", "police_liaison", "dfo"):
        r = await say(f"/invite {role}", as_="control")
        assert not r.reply.ok and "can't invite" in r.reply.text and "/join" not in r.reply.text
        [entry] = await core.facades.audit.audit_log(1)
        assert entry["action"] == "refused" and entry["detail"].startswith("/invite ")
        assert entry["detail"].endswith("as control: refused"), entry
    trail = await core.facades.audit.audit_log()
    assert "/invite admin as control: refused" in [a["detail"] for a in trail]


async def test_the_matrix_is_read_from_roles_toml(store, settings, clock, tmp_path):
    cfg = config_with(tmp_path, granting("viewer", "phase"))
    core = build_core(store, settings, clock, config_dir=cfg, cache_ttl=0)
    from bot.sample import ensure_sample_fixture

    await ensure_sample_fixture(core)
    r = await Chat(core)("/phase gates", as_="viewer")
    assert r.reply.ok, r.reply.text
    assert "/phase" in (await Chat(core)("/help", as_="viewer")).reply.text


@pytest.mark.parametrize("edit, error", [
    (lambda t: t.replace("[roles.viewer]", "[roles.viewr]"), "unknown role 'viewr'"),
    (lambda t: t.replace('"season", "fixtures"', '"seasons", "fixtures"', 1),
     "unknown command 'seasons' for supervisor (did you mean 'season'?)"),
    (lambda t: t.replace('"briefing send"', '"briefing sned"', 1),
     "/briefing has no sub-command 'sned' for control"),
    (lambda t: t.replace('"admin", "safety_officer"', '"safety_officer"', 1),
     "rank must list every role once"),
    (lambda t: t + "\n[roles.steward]\n", "roles.toml:"),
])
async def test_a_bad_roles_toml_stops_the_start_with_one_line(store, settings, clock, tmp_path,
                                                             edit, error):
    cfg = config_with(tmp_path, edit(DEFAULT_ROLES.read_text()))
    with pytest.raises(StartupError) as exc:
        build_core(store, settings, clock, config_dir=cfg)
    assert error in str(exc.value) and "\n" not in str(exc.value), str(exc.value)
    with pytest.raises(RolesError):
        load_role_matrix(cfg / "roles.toml", core_commands())


def core_commands() -> dict[str, frozenset[str]]:
    from bot.app import build_registry

    return build_registry().commands()


async def test_without_roles_toml_the_shipped_matrix_applies(store, settings, clock, tmp_path):
    cfg = config_with(tmp_path)
    (cfg / "roles.toml").unlink()
    core = build_core(store, settings, clock, config_dir=cfg)
    assert core.roles.allowed("admin", "fixture", "use")
    assert not core.roles.allowed("control", "fixture", "add")


# ------------------------------------------------------------------ issue 10, item 22
@pytest.mark.parametrize("role", ROLES.keys())
async def test_help_offers_only_what_your_role_can_use(say, core, role):
    r = await say("/help", as_=role)
    listed = [line.split()[0][1:] for line in r.reply.lines() if line.startswith("/")]
    assert listed and all(core.roles.allowed(role, c) for c in listed), listed
    visible = [n for n, s in core.registry.specs.items() if not s.hidden]
    for name in visible:
        answer = (await say(f"/help {name}", as_=role)).reply.text
        if name in listed:
            assert f"Usage: /{name}" in answer or "Usage: (" in answer, (name, answer)
        else:
            assert not core.roles.allowed(role, name)
            assert answer.startswith(f"/{name} is not for your role ({ROLES.label(role)})."
                                     " "), answer  # then who may, and whom to ask
            assert answer == core.roles.not_for(role, name), answer


async def test_the_commanders_help(say):
    text = (await say("/help", as_="police_commander")).reply.text
    for name in ("/fixture ", "/phase", "/invite", "/ack", "/arrest", "/resolve"):
        assert name not in text, name
    for name in ("/status", "/briefing", "/summary"):
        assert name in text, name
    r = await say("/help phase", as_="police_commander")
    assert "not for your role" in r.reply.text and "Usage" not in r.reply.text
    r = await say("/help briefing", as_="police_commander")
    assert "Usage: /briefing" in r.reply.text
    assert r.reply.text.endswith("Not for your role: /briefing send.")
    assert "Not for your role" not in (await say("/help briefing", as_="control")).reply.text
    r = await say("/help status", as_="U404", platform="slack")
    assert "/join" in r.reply.text and "Usage" not in r.reply.text


# ------------------------------------------------------------------ issue 10, item 23
async def audit_details(core, n: int = 50) -> list[str]:
    trail = await core.facades.audit.audit_log(n)
    return [f"{a['who']} {a['action']} {a['detail']}" for a in trail]


async def test_every_refusal_is_in_the_audit_trail(say, core):
    await say("/incident medical @bms_lower s2", as_="steward")
    await say("/resolve 1", as_="control")
    cases = [
        ("/incident missile @nowhere_at_all s9", "steward", "/incident as steward: usage"),
        ("/ack 1", "supervisor", "/ack as supervisor: refused"),  # closed: the store refuses
        ("/briefing send", "viewer", "/briefing send as viewer: role"),
        ("/briefing post", "police_commander", "/briefing send as police_commander: role"),
        ("/fixture list", "steward", "/fixture list as steward: role"),
        ("/invite admin", "control", "/invite admin as control: role"),
        ("/invite admin", "safety_officer", "/invite admin as safety_officer: role"),
        ("/frobnicate now", "steward", "/? as steward: unknown command"),
        ("/join deadbeef", "admin", None),  # already registered: an answer, not a refusal
    ]
    for text, role, detail in cases:
        before = len(await core.facades.audit.audit_log(1000))
        r = await say(text, as_=role)
        after = await audit_details(core, 1000)
        if detail is None:
            assert r.reply.ok and len(after) == before, (text, after[:1])
            continue
        assert not r.reply.ok, (text, r.reply.text)
        assert len(after) == before + 1, (text, after[:2])  # once, not twice
        assert after[0] == f"console:{role} refused {detail}", (text, after[0])


async def test_strangers_refusals_are_audited_once(core):
    say = Chat(core)
    r = await say("/join 00000000", as_="U777", platform="slack")
    assert not r.reply.ok
    r = await say("/whatever", as_="U777", platform="slack")
    assert not r.reply.ok
    assert await say("/whatever", as_="U777", platform="slack", private=False) is None
    # strangers' refusals have a stream of their own (a flood cannot evict members' entries)
    assert not [d for d in await audit_details(core) if d.startswith("slack:U777 ")]
    mine = [f"{a['who']} {a['action']} {a['detail']}"
            for a in await core.facades.audit.stranger_refusals(50) if a["who"] == "slack:U777"]
    assert mine == ["slack:U777 refused /? as stranger: unknown command",
                    "slack:U777 refused /join as stranger: refused"]


async def test_the_audit_trail_never_holds_the_users_words(say, core):
    for text, role in [("/arrest John Smith", "police_liaison"), ("/ban Jane Doe", "admin"),
                       ("/JohnSmith", "steward"), ("/incident John Smith", "steward"),
                       ("/invite John", "admin")]:
        r = await say(text, as_=role)
        assert not r.reply.ok, text
    trail = " ".join(await audit_details(core))
    for word in ("John", "Smith", "Jane", "Doe"):
        assert word not in trail, trail


async def test_changes_of_who_does_what_are_audited(say, core):
    await say("/fixture add Arsenal v Spurs 2027-03-14 16:30", as_="admin")
    r = await say("/fixture use arsenal-spurs-20270314 all", as_="admin")
    assert r.reply.ok
    r = await say("/invite supervisor", as_="admin")
    code = r.reply.text.split("/join ")[1].split()[0]
    await say(f"/join {code}", as_="newsup", platform="telegram")
    trail = await audit_details(core)
    assert trail[:3] == ["telegram:newsup joined supervisor", "console:admin invite supervisor",
                         "console:admin fixture.use arsenal-spurs-20270314"]


async def test_successful_commands_write_no_audit(say, core):
    before = len(await core.facades.audit.audit_log(1000))
    for text, role in [("/incident medical @bms_lower s2", "steward"), ("/ack 1", "control"),
                       ("/update 1 paramedics here", "steward"), ("/status", "viewer"),
                       ("/briefing", "viewer"), ("/briefing send", "control")]:
        assert (await say(text, as_=role)).reply.ok, text
    assert len(await core.facades.audit.audit_log(1000)) == before
