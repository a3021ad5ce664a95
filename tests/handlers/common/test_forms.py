"""The guided report: three taps, state in Redis, expiry, typed locations."""

from __future__ import annotations

from bot.app import build_core
from tests.support.buttons import press


async def test_three_taps_log_an_incident(say, core):
    r = await say("/incident", as_="steward")
    assert r.reply.title == "New report"
    r = await say(press(r, "Throwing missiles"), as_="steward")  # tap 1
    assert not r.reply.request_location and "send your location" in r.reply.text  # no 2nd message
    # the steward's own zone is offered first
    assert r.reply.buttons[0][0].command.endswith("loc stb_upper")
    r = await say(press(r, "STB top walkway"), as_="steward")  # tap 2
    r = await say(press(r, "4 police"), as_="steward")  # tap 3
    assert r.reply.title == "Logged INC-1"
    fx = await core.active_fixture()
    inc = await core.store.incident(fx.id, 1)
    assert (inc.type, inc.location, inc.severity) == ("missile", "stb_walkway", 4)
    assert await core.facades.forms.form(fx.id, "console:steward") is None


async def test_every_button_fits_telegram_callback_data(say):
    r = await say("/incident", as_="steward")
    r2 = await say(press(r, "More"), as_="steward")
    for res in (r, r2):
        for row in res.reply.buttons:
            for b in row:
                assert len(b.command.encode()) <= 64


async def test_old_button_says_expired(say):
    first = await say("/incident", as_="steward")
    old = press(first, "Disorder")
    await say("/incident", as_="steward")  # a new form replaces the old one
    r = await say(old, as_="steward")
    assert not r.reply.ok and "expired" in r.reply.text
    r = await say("/form abc123 type missile", as_="steward")
    assert "expired" in r.reply.text


async def test_double_tap_on_severity_logs_once(say, core):
    r = await say("/incident", as_="steward")
    r = await say(press(r, "Disorder"), as_="steward")
    r = await say(press(r, "STB upper"), as_="steward")
    sev = press(r, "4 police")
    await say(sev, as_="steward", dedupe="tap-1")
    again = await say(sev, as_="steward", dedupe="tap-2")
    assert again.toast_only and again.reply.text == "Already logged as INC-1."
    fx = await core.active_fixture()
    assert (await core.store.counts(fx.id))["inc:total"] == 1


async def test_typed_location_search_and_cancel(say, core):
    r = await say("/incident", as_="steward")
    r = await say(press(r, "Medical"), as_="steward")
    r = await say("stratford", as_="steward")  # typed, one match -> severity step
    assert "How serious" in r.reply.text and "Stratford station" in r.reply.text
    r = await say("nowhere-at-all", as_="steward")
    assert "How serious" in r.reply.text  # a bad typed severity re-asks, logs nothing
    fid = r.reply.buttons[0][0].command.split()[1]
    r = await say(f"/form {fid} cancel", as_="steward")
    assert "cancelled" in r.reply.text
    fx = await core.active_fixture()
    assert (await core.store.counts(fx.id)).get("inc:total", 0) == 0


async def test_shared_gps_location_is_kept_as_evidence(say, core):
    from bot.domain.messages import Attachment

    r = await say("/incident", as_="steward")
    await say(press(r, "Disorder"), as_="steward")
    r = await say("", as_="steward", attachments=(Attachment("location", lat=51.538, lon=-0.016),))
    assert "How serious" in r.reply.text
    r = await say(press(r, "3 safety"), as_="steward")
    assert r.reply.ok
    fx = await core.active_fixture()
    (ev,) = [e for e in await core.store.events(fx.id) if e.kind == "incident.reported"]
    assert ev.data["evidence"] == [{"kind": "location", "lat": 51.538, "lon": -0.016}]


async def test_a_restarted_bot_continues_the_form(say, core, store, settings, clock):
    r = await say("/incident", as_="steward")
    r = await say(press(r, "Pyrotechnics"), as_="steward")
    tap = press(r, "STB upper")
    from tests.conftest import Chat

    other = Chat(build_core(store, settings, clock, cache_ttl=0))  # another replica
    r = await other(tap, as_="steward")
    r = await other(press(r, "3 safety"), as_="steward")
    assert r.reply.title == "Logged INC-1"


async def test_abandoned_form_expires_quietly(say, core, store):
    r = await say("/incident", as_="steward")
    fx = await core.active_fixture()
    ttl = await core.facades.forms.form_ttl(fx.id, "console:steward")
    assert 0 < ttl <= core.settings.form_ttl_seconds
    await core.facades.forms.drop_form(fx.id, "console:steward")  # what the TTL does
    r = await say(press(r, "Disorder"), as_="steward")
    assert "expired" in r.reply.text


async def test_types_common_in_the_stewards_area_come_first(say):
    for _ in range(2):  # two pyro reports near the steward's zone (stb_upper), far apart in time
        await say("/incident pyro @stb_walkway s3 new", as_="control")
        await say("/resolve 1", as_="control")
    for place in ("pudding_mill", "bms_upper", "ws_concourse"):  # commoner, but far away
        await say(f"/incident medical @{place} s2", as_="control")
    r = await say("/incident", as_="steward")
    first = [b.label for b in r.reply.buttons[0]]
    assert first[0] == "Pyrotechnics" and first[1] == "Medical"
