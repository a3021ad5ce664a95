"""METHANE: every field required, sent to every command channel at once, kept as sev 5;
ETHANE when not declared; HOT and the 4 Cs for suspicious items."""

from tests.support.lifecycle import log_of, record

FULL = ("/methane m=yes e=stb walkway t=crowd crush on the walkway h=surge risk, stairs "
        "blocked a=gate A ramp, RVP coach park n=12 casualties, 3 serious "
        "s=police and LAS on scene, fire service required")


async def test_one_line_methane_with_a_missing_field_is_refused_and_writes_nothing(say, core):
    r = await say("/methane m=yes e=stb walkway t=crush h=surge a=gate a n=12", as_="control")
    assert not r.reply.ok and "METHANE needs every field" in r.reply.text
    assert "E (emergency services present and required)" in r.reply.text
    r = await say("/methane m=maybe e=nowhere-land t=x h=x a=x n=x s=x", as_="control")
    assert "M must be yes or no" in r.reply.text and "not a place" in r.reply.text
    assert await log_of(core, "incident.reported") == []


async def test_methane_goes_to_every_command_channel_as_a_severity_5_incident(say, core):
    sent = record(core)
    r = await say(FULL, as_="safety_officer")
    assert r.reply.ok and r.reply.title == "METHANE INC-1", r.reply.text
    heads = [o for o in sent if o.reply.title.startswith("🔴 METHANE INC-1")]
    assert sorted(o.audience for o in heads) == ["command", "control", "police"]
    assert "M – MAJOR INCIDENT DECLARED" in heads[0].reply.text
    assert "N – Number and severity of casualties: 12 casualties, 3 serious" in heads[0].reply.text
    fx = await core.active_fixture()
    inc = await core.store.incident(fx.id, 1)
    assert inc.severity == 5 and inc.location == "stb_walkway" and inc.methane
    ev = (await log_of(core, "incident.reported"))[0]
    assert ev.data["methane"]["s"].startswith("police and LAS")


async def test_ethane_when_not_declared(say):
    r = await say(FULL.replace("m=yes", "m=no"), as_="control")
    assert r.reply.title == "ETHANE INC-1"
    assert "MAJOR INCIDENT" not in r.reply.text and "E – Exact location" in r.reply.text


async def test_guided_methane_asks_each_field_and_requires_an_answer(say, core):
    r = await say("/methane", as_="supervisor")
    assert r.reply.text.startswith("M – Major incident declared?")
    yes = r.reply.buttons[0][0].command
    r = await say(yes, as_="supervisor")
    assert r.reply.text.startswith("E – Exact location")
    r = await say("somewhere vague", as_="supervisor")  # plain text continues the form
    assert "not a place" in r.reply.text
    answers = ["top walkway", "crowd crush", "surge", "gate A ramp", "12, 3 serious",
               "police on scene, fire required"]
    for text in answers:
        r = await say(text, as_="supervisor")
    assert r.reply.title == "Send this METHANE?"
    assert await log_of(core, "incident.reported") == []
    r = await say(r.reply.buttons[0][0].command, as_="supervisor")
    assert r.reply.title == "METHANE INC-1", r.reply.text
    fx = await core.active_fixture()
    assert await core.facades.forms.form(fx.id, "console:supervisor") is None


async def test_a_guided_methane_is_sent_by_typing_yes_and_cancelled_by_typing_cancel(say, core):
    answers = ["yes", "top walkway", "crowd crush", "surge", "gate A ramp", "12, 3 serious",
               "police on scene, fire required"]
    await say("/methane", as_="supervisor")
    for text in answers:
        r = await say(text, as_="supervisor")
    r = await say("hmm", as_="supervisor")  # neither: the report again, nothing sent
    assert r.reply.title == "Send this METHANE?" and "Reply yes" in r.reply.text
    assert (await say("cancel", as_="supervisor")).reply.text.startswith("METHANE report "
                                                                         "cancelled")
    assert await log_of(core, "incident.reported") == []
    await say("/methane", as_="supervisor")
    for text in answers:
        r = await say(text, as_="supervisor")
    r = await say("yes", as_="supervisor")
    assert r.reply.title == "METHANE INC-1", r.reply.text
    assert len(await log_of(core, "incident.reported")) == 1


async def test_suspicious_item_walks_through_hot_and_the_4_cs(say, core):
    r = await say("/incident suspicious_item @gate_c unattended rucksack", as_="steward")
    assert "HOT test for INC-1: Hidden?" in r.reply.text and "4 Cs: Confirm" in r.reply.text
    press = r.reply.buttons[0][0].command  # Hidden? yes
    r = await say(press, as_="steward")
    assert "Obviously suspicious?" in r.reply.text
    r = await say(r.reply.buttons[0][1].command, as_="steward")  # obvious: no
    assert "Typical?" in r.reply.text
    r = await say(r.reply.buttons[0][1].command, as_="steward")  # typical: no
    assert "TREAT AS SUSPICIOUS" in r.reply.text and "Clear (move people" in r.reply.text
    upd = await log_of(core, "incident.update")
    assert upd[0].data["text"].startswith("HOT: hidden yes, obviously suspicious no, typical no")
