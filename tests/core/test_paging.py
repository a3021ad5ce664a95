"""Long answers come in pages that fit each platform: one Telegram message (4,096 characters
after escaping), one Slack message (3,000 per section, 50 blocks); "more: /incident 7 page 2"
(issue 10 item 18)."""

from __future__ import annotations

from tests.support.paging import (  # noqa: F401 (fixtures)
    fits_every_platform,
)


async def _long_incident(say) -> None:
    await say("/incident disorder @stb_walkway s4 fight", as_="steward")
    for i in range(60):  # 60 updates of ~500 characters: a 30,000-character timeline
        await say(f"/update 1 update {i:02d} " + "<b>&" * 120, as_="control")


async def test_a_long_timeline_comes_in_pages_that_fit(say):
    await _long_incident(say)
    r = await say("/incident 1", as_="control")
    assert fits_every_platform(r.reply)
    assert r.reply.text.rstrip().endswith("more: /incident 1 page 2")
    assert any(b.command == "/incident 1 page 2" for row in r.reply.buttons for b in row)
    seen, page = r.reply.text, 2
    while "more: /incident 1 page" in r.reply.text:
        r = await say(f"/incident 1 page {page}", as_="control")
        assert r.reply.ok and fits_every_platform(r.reply)
        seen += r.reply.text
        page += 1
    assert "the last" in r.reply.text
    for i in range(60):
        assert f"update {i:02d}" in seen
    r = await say(f"/incident 1 page {page + 5}", as_="control")
    assert not r.reply.ok and "No page" in r.reply.text


async def test_a_short_answer_has_no_paging(say):
    await say("/incident disorder @stb_walkway s4 fight", as_="steward")
    r = await say("/incident 1", as_="control")
    assert "page" not in r.reply.text
    r = await say("/status page 2", as_="control")
    assert not r.reply.ok and "No page 2" in r.reply.text


async def test_a_long_write_answer_continues_in_further_messages(say, core):
    sent = []

    async def tap(out):
        sent.append(out)

    core.notifier.taps.append(tap)
    field = "<>&" * 400  # 1,200 characters that escape to 4,800
    r = await say(f"/methane m=yes e=stb walkway t=fight h={field} a=gate a n=0 s=police",
                  as_="safety_officer")
    assert r.reply.ok and fits_every_platform(r.reply)
    rest = [o for o in sent if o.audience == "user:console:safety_officer"]
    assert rest and all(fits_every_platform(o.reply) for o in rest)
    whole = r.reply.text + "".join(o.reply.text for o in rest)
    assert whole.count("<") == 400 and whole.count("&") == 400  # nothing lost


async def test_a_line_separator_in_an_update_survives_paging(say):
    await _long_incident(say)
    r = await say("note odd\u2028line and next\x85line", as_="steward")  # plain text, kept as typed
    assert r.reply.ok, r.reply.text
    seen, page = "", 1
    while True:
        r = await say(f"/incident 1 page {page}", as_="control")
        seen += r.reply.text
        if f"/incident 1 page {page + 1}" not in r.reply.text:
            break
        page += 1
    assert "odd\u2028line and next\x85line" in seen
