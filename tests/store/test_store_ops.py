"""The write script's typed ops: a Var is filled in only where the store put one; text that
looks like a placeholder (old or new syntax) is stored as it is."""

from __future__ import annotations

import pytest

from bot.domain.ledger import Event, Var
from bot.store import Refused
from bot.store.base import fx_prefix
from bot.store.ops import Hget, Hset, Incr, RequireIn, ReturnHash, log_event

P = fx_prefix("opstest")


async def test_vars_fill_in_only_where_the_store_put_them(store):
    n = Var("n")
    looks_like = ["\x01n\x01", '{"v":"n"}', '{"t":["x"]}', "\\u0001n\\u0001"]
    data = {"id": "INC-" + n, "deep": [{"n": n}], "text": looks_like}
    applied = await store.apply(P, [
        Incr("seq", "n"),
        Hset("x:" + n, {"literal": looks_like[0], "json": looks_like[1], "n": n}),
        *log_event(Event("note", "2026-11-25T18:00:00+00:00", "t:1", "steward", data,
                         phase="pre")),
        ReturnHash("x:" + n),
    ])
    assert applied.hashes == [{"literal": "\x01n\x01", "json": '{"v":"n"}', "n": "1"}]
    [ev] = await store.events("opstest")
    assert ev.data == {"id": "INC-1", "deep": [{"n": "1"}], "text": looks_like}
    assert await store.incident_events("opstest", 1) == [ev]  # indexed under its incident


async def test_a_refusal_names_the_current_value(store):
    await store.apply(P, [Hset("inc:1", {"status": "closed"})])
    with pytest.raises(Refused, match="^INC-1 is already closed; nothing changed.$"):
        await store.apply(P, [RequireIn("inc:1", "status", ["reported"],
                                        "INC-1 is already " + Var("current")
                                        + "; nothing changed."),
                              Hget("inc:1", "status", "never")])


def test_a_var_cannot_be_formatted_into_text_by_mistake():
    with pytest.raises(TypeError):
        f"INC-{Var('n')}"  # noqa: B018
