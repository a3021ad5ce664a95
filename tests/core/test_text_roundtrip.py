"""Nothing a user types changes how the log is encoded: text round-trips exactly through the
write, every read path, export and verify (issue #10 item 1)."""

from __future__ import annotations

import json
import string

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.domain.ledger import clean_text
from bot.domain.messages import Attachment
from bot.evidence.export import export_fixture
from bot.evidence.signing import new_key
from bot.evidence.verify import verify_dir

NASTY = ["\\u0001", "\x01", "\x00", "\\", '"', "\\\\u0001", "\x01n\x01", "\x01current\x01",
         '{"v":"n"}', '{"t":["x"]}', "\u2028", "\x85", "\x1c", "\r\n", "\ud800", "\udfff",
         "\ud83d\ude00", "😀", "é", "\t", "C:\\u0001 folder", "%s", "{}", "[]", "\ufeff"]
# every code point, lone surrogates included (hypothesis leaves them out by default)
ANY_CHAR = st.characters(codec=None, exclude_categories=())
texts = st.lists(st.one_of(st.sampled_from(NASTY), st.text(ANY_CHAR, max_size=20),
                           st.text(string.printable, max_size=10)), max_size=8).map("".join)
FEW = settings(max_examples=40, deadline=None,
               suppress_health_check=[HealthCheck.function_scoped_fixture,
                                      HealthCheck.too_slow])


async def _all_reads_work(say, core, tmp_path, expect: list[str]) -> None:
    fx = await core.active_fixture()
    pages, page = [], 1
    while True:  # a long timeline comes in pages ("more: /incident 1 page 2")
        timeline = await say(f"/incident 1 page {page}", as_="control")
        assert timeline.reply.ok, timeline.reply.text
        pages.append(timeline.reply.text)
        if f"/incident 1 page {page + 1}" not in timeline.reply.text:
            break
        page += 1
    for text in expect:
        assert any(text in p for p in pages)
    for cmd in ("/status", "/summary"):
        r = await say(cmd, as_="police_commander")
        assert r.reply.ok and "failed" not in r.reply.text, (cmd, r.reply.text)
    out = await export_fixture(core.store, core.facades, fx.id, tmp_path / "x", restricted=False,
                               key=new_key())
    result = verify_dir(out)
    assert result.ok, result
    exported = [json.loads(line)["data"].get("text")
                for line in (out / "events.jsonl").read_text(encoding="utf-8").split("\n")
                if line]
    for text in expect:
        assert text in exported


async def test_the_issue_repro_an_escaped_u0001_stays_text(say, core, tmp_path):
    await say("/incident missile @seg_ne s3 coins", as_="steward")
    r = await say("/update 1 see note C:\\u0001 folder", as_="steward")
    assert r.reply.ok, r.reply.text
    await say("/update 1 raw \x01 byte and \x01n\x01", as_="steward")
    await _all_reads_work(say, core, tmp_path,
                          ["see note C:\\u0001 folder", "raw \x01 byte and \x01n\x01"])


@FEW
@given(text=texts)
async def test_any_text_round_trips_through_every_read_and_export(say, core, tmp_path, text):
    fx = await core.active_fixture()
    if await core.store.incident(fx.id, 1) is None:
        await say("/incident missile @seg_ne s3", as_="steward")
    before = len(await core.store.events(fx.id))
    note = clean_text("note " + text).strip()  # plain text: trimmed like any message
    r = await say("note " + text, as_="steward")
    assert r.reply.ok, r.reply.text
    r = await say("", as_="steward", attachments=(Attachment("photo", "f1", caption=text),))
    assert r.reply.ok, r.reply.text
    new = (await core.store.events(fx.id))[before:]
    assert [e.kind for e in new] == ["incident.update", "incident.evidence"]
    assert new[0].data["text"] == note
    assert new[1].data["evidence"][0]["caption"] == clean_text(text)  # exactly, untrimmed
    await _all_reads_work(say, core, tmp_path, [note])


def test_only_lone_surrogates_are_changed():
    assert clean_text("a\ud800b\udfff") == "a\ufffdb\ufffd"
    text = "\x00\x01\\u0001 😀 \u2028"
    assert clean_text(text) is text
