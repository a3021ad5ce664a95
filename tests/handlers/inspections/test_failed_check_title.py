"""A failed inspection's incident says a check failed, never that its type's event happened
(issue 36 §18): 'Inspection failed: loose objects not removed', category missile, on the
card, the status list, the incident itself and the web view."""

from __future__ import annotations

from tests.support.lifecycle import log_of, record

TITLE = "Inspection failed: loose objects not removed"


async def test_a_failed_check_is_titled_as_one_everywhere(say, core):
    sent = record(core)
    r = await say("/inspect missiles_removed fail bottles left in block 105", as_="steward")
    assert "Raised INC-1" in r.reply.text, r.reply.text
    fx = await core.active_fixture()
    inc = await core.store.incident(fx.id, 1)
    assert inc.type == "missile" and inc.failed_check == "loose objects not removed"
    cards = [o.reply for o in sent if o.reply.card is not None and o.reply.card.n == 1]
    cards += [o.reply for o in (await say("/incident 1", as_="control")).outbound]
    shown = (await say("/incident 1", as_="control")).reply
    assert shown.card is not None and shown.card.what == TITLE and shown.card.kind == "missile"
    assert TITLE in shown.title and "Throwing missiles" not in shown.title
    assert all(c.card.what == TITLE for c in cards if c.card is not None)
    status = (await say("/status", as_="control")).reply.text
    assert TITLE in status, status
    assert "Throwing missiles" not in status
    [ev] = await log_of(core, "incident.reported")  # the record carries it, typed
    assert ev.data["failed_check"] == "loose objects not removed" and ev.data["type"] == "missile"



async def test_an_ordinary_missile_report_keeps_its_type_title(say, core):
    await say("/incident missile @stb walkway coins thrown", as_="steward")
    shown = (await say("/incident 1", as_="control")).reply
    assert shown.card.what == "Throwing missiles"
