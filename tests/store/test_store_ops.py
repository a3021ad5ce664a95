"""The write script's typed ops: a Var is filled in only where the store put one; text that
looks like a placeholder (old or new syntax) is stored as it is."""

from __future__ import annotations

import json

import pytest

from bot.domain.ledger import Event, Var
from bot.domain.outcomes import Reason
from bot.store import Refused
from bot.store.base import fx_prefix, guard
from bot.store.log_views import LogViews
from bot.store.ops import Hget, Hset, Incr, RequireIn, ReturnHash, log_event

P = fx_prefix("opstest")


async def test_vars_fill_in_only_where_the_store_put_them(store):
    n = Var("n")
    looks_like = ["\x01n\x01", '{"v":"n"}', '{"t":["x"]}', "\\u0001n\\u0001"]
    data = {"id": "INC-" + n, "deep": [{"n": n}], "text": looks_like}
    applied = await store.gateway.apply(P, [
        Incr("seq", "n"),
        Hset("x:" + n, {"literal": looks_like[0], "json": looks_like[1], "n": n}),
        *log_event(Event("note", "2026-11-25T18:00:00+00:00", "t:1", "steward", data,
                         phase="pre")),
        ReturnHash("x:" + n),
    ])
    assert applied.hashes == [{"literal": "\x01n\x01", "json": '{"v":"n"}', "n": "1"}]
    [ev] = await store.events("opstest")
    assert ev.data == {"id": "INC-1", "deep": [{"n": "1"}], "text": looks_like}
    # indexed under its incident
    assert await LogViews(store.gateway).incident_events("opstest", 1) == [ev]


async def test_a_refusal_names_the_current_value(store):
    await store.gateway.apply(P, [Hset("inc:1", {"status": "closed"})])
    with pytest.raises(Refused) as refused:
        await store.gateway.apply(P, [RequireIn("inc:1", "status", ["reported"],
                                        guard(Reason.STATUS, 1, Var("current"))),
                              Hget("inc:1", "status", "never")])
    assert (refused.value.reason, refused.value.subject, refused.value.current) == \
        (Reason.STATUS, "1", "closed")


def test_a_var_cannot_be_formatted_into_text_by_mistake():
    with pytest.raises(TypeError):
        f"INC-{Var('n')}"  # noqa: B018


async def test_the_wire_format_does_not_change_what_is_stored(core, monkeypatch):
    """Ops travel to the script as MessagePack; what a report stores (the outbox references
    for the control and command chats and the reporter, the log, the incident) is the same,
    byte for byte, as when they travelled as JSON."""
    from bot.domain.messages import Command, ReplyVia
    from bot.sample import ensure_sample_fixture
    from bot.store import gateway
    from bot.store.ops import encode_json
    from bot.store.outbox import Outbox

    core.notifier.outbox = Outbox(core.store.gateway)
    text = ('/incident missile @stb_walkway s4 🔥 coins & "bottles" thrown — é\\u00e9 '
            '{"v":"n"} ☎️ 𝄞 from the upper tier')

    async def stored() -> tuple[list, list, dict]:
        r = await core.handle(Command(platform="console", chat="steward", user="steward",
                                      text=text, dedupe_key="wire:1", reply_via=ReplyVia()))
        assert r is not None and r.reply.ok and r.reply.title == "Logged INC-1"
        fx = await core.active_fixture()
        p = fx_prefix(fx.id)
        outbox = [f for _, f in await core.store.gateway.r.xrange(p + "obx")]
        log = [f for _, f in await core.store.gateway.r.xrange(p + "log")]
        return outbox, log, await core.store.gateway.r.hgetall(p + "inc:1")

    packed = await stored()
    assert {o["m"].split('"aud":"')[1].split('"')[0] for o in packed[0]} == \
        {"control,command", "user:console:steward"}
    entry = json.loads(packed[0][0]["m"])  # a reference, rendered at send time
    assert (entry["ref"], entry["live"]) == ("INC-1", {"view": "card", "n": 1})
    assert "🔥" in packed[2]["description"] and "𝄞" in packed[2]["description"]
    await core.store.reset_for_tests()
    await ensure_sample_fixture(core)
    monkeypatch.setattr(gateway, "encode", encode_json)
    assert await stored() == packed


async def test_branches_run_only_when_taken_and_a_refusal_inside_one_refuses_all(store):
    from bot.store.ops import Unless, When, WhenCmp

    applied = await store.gateway.apply(P, [
        Incr("seq", "n"),
        When("n", [Hset("x", {"when": "yes", "odd": "\ud800"}),
                   WhenCmp("n", "<", 5, [Hset("x", {"lt": "yes"})]),
                   WhenCmp("n", "==", "2", [Hset("x", {"eq": "wrong"})]),
                   Unless("n", [Hset("x", {"unless": "wrong"})])]),
        Unless("none", [Hset("x", {"unless": "yes"})]),
        ReturnHash("x"),
    ])
    assert applied.hashes == [{"when": "yes", "odd": "\ufffd", "lt": "yes", "unless": "yes"}]
    with pytest.raises(Refused) as refused:
        await store.gateway.apply(P, [Hget("x", "when", "w"),
                              When("w", [WhenCmp("w", "==", "yes", [
                                  RequireIn("x", "lt", ["no"],
                                            guard(Reason.CHANGED, "x", Var("current")))])]),
                              Hset("x", {"after": "never"})])
    assert refused.value.current == "yes"
    assert "after" not in await store.gateway.r.hgetall(P + "x")


async def test_a_server_without_the_scripts_runs_them_from_their_body(store):
    """A promoted replica never ran this replica's scripts. Each kind of script still runs
    first time, from its body, with no SCRIPT LOAD: across a failover a load and the run
    after it can reach two servers, and the run would answer NOSCRIPT again."""
    from bot.store.inbox import Seen
    from bot.store.windows import Windows

    gw = store.gateway
    await gw.apply(P, [Incr("seq", "n")])
    await Seen(gw).first("slack:warm")
    plain = gw.script("return redis.call('INCR', KEYS[1])")
    await gw.run_script(plain, [P + "plain"], [])
    await gw.r.script_flush()
    loads = (await gw.r.info("commandstats")).get("cmdstat_script|load", {}).get("calls", 0)

    applied = await gw.apply(P, [Incr("seq", "n"), Hset("x:" + Var("n"), {"k": "v"})])
    assert await Seen(gw).first("slack:Ev1") is True
    assert await Windows(gw).take([(P + "rl", 30, 1.0)], 1_800_000_000.0, "s1") == 0.0
    assert await gw.run_script(plain, [P + "plain"], []) == 2
    assert applied.hashes == [] and await gw.r.hget(P + "x:2", "k") == "v"
    after = (await gw.r.info("commandstats")).get("cmdstat_script|load", {}).get("calls", 0)
    assert after == loads
