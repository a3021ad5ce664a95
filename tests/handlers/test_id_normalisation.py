"""One normalisation of typed ids everywhere (#31 item 5): a ground, a post or a checklist
item typed with capitals, hyphens or spaces is the id, as zones (`@gate-c`) already were."""

from __future__ import annotations


async def test_a_ground_id_typed_with_hyphens_and_capitals_is_the_ground(say, core):
    r = await say("/fixture add West Ham v Spurs 2026-12-20 15:00 ground=London-Stadium",
                  as_="admin")
    assert r.reply.ok and "at London Stadium" in r.reply.text, r.reply.text
    [fx] = [f for f in await core.store.fixtures() if f.away == "Spurs"]
    assert fx.ground == "london_stadium"
    r = await say("/fixture add West Ham v Fulham 2026-12-27 15:00 ground=wembley", as_="admin")
    assert not r.reply.ok and "london_stadium" in r.reply.text  # an unknown one: the list


async def test_posts_and_checklist_items_fold_like_zones(say, core):
    r = await say("/deploy 62 STB-256-Gangway A. Steward", as_="control")
    assert r.reply.ok and "Deployed A. Steward [62]" in r.reply.text, r.reply.text
    r = await say("/deploy import\n63,B. Steward,Stb 250 Gangway", as_="control")
    assert r.reply.ok and "Deployed B. Steward [63]" in r.reply.text, r.reply.text
    r = await say("/inspect Walkway-Netting pass", as_="supervisor")
    assert r.reply.ok, r.reply.text
    r = await say("/incident medical @Gate-C s2", as_="steward")  # as zones always did
    assert r.reply.ok, r.reply.text
