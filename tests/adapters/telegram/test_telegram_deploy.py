"""The stewarding plan (issue 24 §1) through python-telegram-bot against the fake Bot API: the
ground's posts filled one by one and from the club's rota CSV, the expected attendance, and
planned vs filled in /status; a bad rota line imports nothing."""

from __future__ import annotations

from bot.adapters.telegram.telegram_adapter import TelegramAdapter
from bot.core.dispatch import Core
from bot.core.roles import Member
from rigs.fakes.telegram_api import FakeTelegram
from tests.support.deploy_chat import (  # noqa: F401 (fixtures)
    ask_as,
)
from tests.support.telegram import (  # noqa: F401 (fixtures)
    Feed,
    fake,
    polling,
    sends_to,
)

SO = 300000001
ROTA = """steward id,name,post
311,Tabard 311,stb_256_gangway
312,Tabard 312,stb_105_vom
B07,Search B07,gate_b_lane_1
"""


async def ask(fake: FakeTelegram, text: str, needle: str) -> str:  # noqa: F811
    return await ask_as(fake, SO, text, needle)


async def test_posts_are_filled_from_the_rota_and_counted_in_status(
        core: Core, fake: FakeTelegram, polling: TelegramAdapter) -> None:  # noqa: F811
    core.roster[f"telegram:{SO}"] = Member("telegram", str(SO), "safety_officer", "SO")
    await ask(fake, "/deploy 250 stb_250_gangway Tabard 250", "Deployed Tabard 250 [250] on "
                                                             "Block 250 gangway")
    await ask(fake, "/deploy import\n" + ROTA, "Deployed 3 stewards from the rota")
    await ask(fake, "/deploy attendance 41000", "164 mobile stewards needed")
    status = await ask(fake, "/status", "Posts: 4/8 filled")
    assert "⚠ MOBILE 0 of 164 needed" in status  # the plan has one mobile post, and it is empty
    plan = await ask(fake, "/deploy", "✗ UNFILLED STB mobile 1")
    assert "✓ Block 105 vomitory (static): Tabard 312 [312]" in plan

    bad = await ask(fake, "/deploy import\n313,Tabard 313,stb_250_gangway\n314,Tabard 314,"
                          "block 999\n", "Nothing imported")
    assert "no post 'block 999'" in bad
    await ask(fake, "/status", "Posts: 4/8 filled")  # nothing of the bad import written

    await ask(fake, "/deploy 315 nowhere", "No post 'nowhere'")


EAST = 300000011  # a steward in the STB upper tier


async def test_a_roll_call_asks_the_zone_and_a_tap_checks_in(
        core: Core, fake: FakeTelegram, polling: TelegramAdapter) -> None:  # noqa: F811
    core.roster[f"telegram:{SO}"] = Member("telegram", str(SO), "safety_officer", "SO")
    core.roster[f"telegram:{EAST}"] = Member("telegram", str(EAST), "steward", "Tabard 311",
                                             "stb_upper")
    await ask(fake, "/deploy 311 stb_250_gangway Tabard 311", "Deployed")
    await ask(fake, "/rollcall stb", "Roll call sent to")
    call = (await fake.wait_for(sends_to(EAST, "📋 Roll call")))[-1]
    rows = call.params["reply_markup"]["inline_keyboard"]
    labels = [b["text"] for row in rows for b in row]
    assert "On post: Block 250 gangway ✓" in labels and "On post: Block 256 gangway ✓" in labels
    assert not any("Gate B" in x for x in labels)  # only the posts of the steward's zone
    tap = next(b["callback_data"] for row in rows for b in row if "250" in b["text"])
    msg = next(m for (c, _), m in fake.messages.items()
               if c == EAST and "Roll call" in m.get("text", ""))
    await Feed(fake)(fake.callback_update(EAST, msg, tap))
    await fake.wait_for(lambda calls: [c for c in calls if c.ok and c.params.get("chat_id")
                                       == EAST and "On post: Block 250 gangway ✓"
                                       in str(c.params.get("text"))])
    status = await ask(fake, "/status", "📋 Roll call")
    assert "1/5 posts on" in status and "4 unfilled posts" in status  # not missing stewards
    assert "not yet:" not in status  # the one rota steward answered


AWAY_GATE = 100000001  # the roster's Telegram steward


async def test_a_steward_signs_off_the_briefing_version_and_control_sees_the_share(
        core: Core, fake: FakeTelegram, polling: TelegramAdapter) -> None:  # noqa: F811
    core.roster[f"telegram:{SO}"] = Member("telegram", str(SO), "safety_officer", "SO")
    await Feed(fake)(fake.message_update(AWAY_GATE, "/briefing"))
    brief = (await fake.wait_for(sends_to(AWAY_GATE, "Version v")))[-1]
    [[button]] = brief.params["reply_markup"]["inline_keyboard"]
    assert button["text"].startswith("✅ I have read it (v")
    version = button["text"].split("(")[1].rstrip(")")
    msg = next(m for (c, _), m in fake.messages.items()
               if c == AWAY_GATE and "Version v" in m.get("text", ""))
    await Feed(fake)(fake.callback_update(AWAY_GATE, msg, button["callback_data"]))
    await fake.wait_for(lambda calls: [c for c in calls if c.ok and c.params.get("chat_id")
                                       == AWAY_GATE and "signed off" in str(c.params.get(
                                           "text"))])
    status = await ask(fake, "/status", f"Briefing {version}: 1/3 stewards signed off (33%)")
    assert "Steward 14 (STB upper)" in status and "Steward 21" not in status.split("not yet")[1]
    await Feed(fake)(fake.message_update(AWAY_GATE, "/briefed v000000"))
    await fake.wait_for(sends_to(AWAY_GATE, "The briefing has changed since v000000"))


CONTROL_ROOM = 300000031  # control: may /deploy, not /fixture (add, cancel, ...)
SUPERVISOR = 300000032


async def test_fixture_attendance_is_deploy_attendance_by_another_name(
        core: Core, fake: FakeTelegram, polling: TelegramAdapter) -> None:  # noqa: F811
    core.roster[f"telegram:{CONTROL_ROOM}"] = Member("telegram", str(CONTROL_ROOM), "control",
                                                     "Control")
    core.roster[f"telegram:{SUPERVISOR}"] = Member("telegram", str(SUPERVISOR), "supervisor",
                                                   "Sup")
    fx = await core.active_fixture()
    assert fx is not None
    state = core.facades.stewarding

    async def stored() -> tuple[int, list[dict]]:
        _, att = await state.deployment(fx.id)
        return att, [e.data for e in await core.store.events(fx.id)
                     if e.kind == "deploy.attendance"]

    said = await ask_as(fake, CONTROL_ROOM, "/fixture attendance 41000",
                        "Expected attendance 41,000: 164 mobile stewards needed")
    assert await stored() == (41000, [{"attendance": 41000}])
    again = await ask_as(fake, CONTROL_ROOM, "/deploy attendance 41,000", "Expected attendance")
    assert again == said  # the same answer, the same value stored, logged the same way
    assert await stored() == (41000, [{"attendance": 41000}] * 2)
    await ask_as(fake, CONTROL_ROOM, "/fixture attendance 52000", "208 mobile stewards")
    await ask_as(fake, CONTROL_ROOM, "/status", "for 52,000 expected")

    # a typo or a missing number: one line (and the usage), the same for both spellings,
    # nothing stored
    for typed in ("/fixture attendance 41k", "/deploy attendance 41k", "/fixture attendance",
                  "/deploy attendance", "/fixture attendance 41000 people"):
        no = await ask_as(fake, CONTROL_ROOM, typed, "Attendance is a whole number, e.g. "
                                                     "/fixture attendance 41000.")
        assert no.split("\n")[0] == "Attendance is a whole number, e.g. /fixture attendance "\
            "41000.", no
    for typed in ("/fixture attendance 0", "/deploy attendance 0"):
        await ask_as(fake, CONTROL_ROOM, typed, "Attendance must be between 1 and 200,000.")
    # the same role check: whoever may /deploy, nobody else (a supervisor may neither)
    for typed in ("/fixture attendance 9000", "/deploy attendance 9000"):
        no = await ask_as(fake, SUPERVISOR, typed, "is not for your role (Supervisor)")
        assert "\n" not in no.strip()
    await ask_as(fake, CONTROL_ROOM, "/fixture cancel", "/fixture cancel is not for your role")
    assert (await stored())[0] == 52000
