"""The tabard <-> account link (issue 24 §1) through python-telegram-bot against the fake Bot
API: a steward links their account once with /tabard <n>; a tabard not on the rota, a tabard
linked to another account and a second tabard are refused in one line; control links or moves
one with /tabard link; a linked steward is then reached by the broadcasts of their post's zone
and named by the rota's name."""

from __future__ import annotations

from bot.adapters.telegram.telegram_adapter import TelegramAdapter
from bot.core.dispatch import Core
from bot.core.roles import Member
from bot.store.stewarding_keys import Stewarding
from rigs.fakes.telegram_api import FakeTelegram
from tests.support.deploy_chat import (
    ask_as as ask,
)
from tests.support.telegram import (  # noqa: F401 (fixtures)
    fake,
    polling,
    sends_to,
)

SO = 300000001
NEW = 300000021  # a steward who joined with no zone: the rota says where they are
OTHER = 300000022
ROTA = "steward id,name,post\n311,A. Steward,stb_250_gangway\n312,B. Steward,gate_b_lane_1\n"


async def test_a_steward_links_their_tabard_once_and_is_reached_by_their_zone(
        core: Core, fake: FakeTelegram, polling: TelegramAdapter) -> None:  # noqa: F811
    core.roster[f"telegram:{SO}"] = Member("telegram", str(SO), "safety_officer", "SO")
    core.roster[f"telegram:{NEW}"] = Member("telegram", str(NEW), "steward", "new phone")
    core.roster[f"telegram:{OTHER}"] = Member("telegram", str(OTHER), "steward", "other")
    await ask(fake, NEW, "/tabard 311", "Tabard 311 is not on the rota")  # no rota yet
    await ask(fake, SO, "/deploy import\n" + ROTA, "Deployed 2 stewards")
    await ask(fake, NEW, "/tabard 9999", "Tabard 9999 is not on the rota")
    await ask(fake, NEW, "/tabard 31 1", "Just the number")
    done = await ask(fake, NEW, "/tabard 311", "Your account is tabard 311")
    assert "A. Steward, Block 250 gangway" in done
    await ask(fake, NEW, "/tabard 311", "already linked")
    await ask(fake, OTHER, "/tabard 311", "Tabard 311 is linked to another account")
    await ask(fake, NEW, "/tabard 312", "Your account is tabard 311; ask control")
    await ask(fake, NEW, "/tabard", "You are tabard 311: A. Steward, Block 250 gangway")
    await ask(fake, OTHER, "/tabard link 312 telegram:" + str(OTHER), "not for your role")

    # the link puts the account in its post's zone, by the rota's name
    await ask(fake, SO, "/broadcast stb_upper keep the gangway clear", "sent to")
    await fake.wait_for(sends_to(NEW, "keep the gangway clear"))
    assert sends_to(OTHER, "keep the gangway clear")(fake.calls) == []
    status = await ask(fake, SO, "/status", "have it")
    assert "A. Steward" in status

    # control moves tabard 311 to the other account (a new phone); the old one is unlinked
    await ask(fake, SO, f"/tabard link 311 telegram:{OTHER}", f"telegram:{OTHER} is tabard 311")
    await ask(fake, SO, "/tabard link 311 telegram:555", "has not joined")
    state = Stewarding(core.store.gateway)
    assert await state.tabards() == {"311": f"telegram:{OTHER}"}
    assert await state.tabard_of(f"telegram:{NEW}") == ""
    audit = [e for e in await core.facades.audit.audit_log() if e["action"] == "tabard.link"]
    assert len(audit) == 2 and f"was telegram:{NEW}" in audit[0]["detail"]
