"""Issue 20, item 13: the sign-in page says whose account (name and role) the link opens,
before the button, with the name escaped."""

from __future__ import annotations

import re
from datetime import timedelta

from bot.core.dispatch import Core
from bot.domain.clock import VirtualClock
from bot.domain.messages import Command
from tests.conftest import Chat
from tests.security.screens import link_for

BEFORE_BUTTON = re.compile(r"signs this browser in as <b><bdi>(.*?)</bdi></b> · (.*?)\.</p>"
                           r"<form[^>]*><button[^>]*>Sign in</button>", re.S)


async def test_the_page_names_the_member_and_role_before_sign_in(client, say: Chat) -> None:
    path = await link_for(say, "police_commander")
    page = await (await client.get(path)).text()
    m = BEFORE_BUTTON.search(page)
    assert m, page
    assert m.groups() == ("Match Commander (Silver)", "Police commander")


async def test_a_members_name_is_escaped(client, say: Chat, core: Core) -> None:
    invite = await say("/invite viewer", as_="admin")
    code = re.search(r"/join (\w+)", invite.reply.text).group(1)
    joined = await core.handle(Command(platform="console", chat="eve", user="eve",
                                       text=f"/join {code}", dedupe_key="test:eve-join",
                                       user_name='<img src=x onerror="alert(1)">Eve'))
    assert joined.reply.ok
    path = await link_for(say, "eve")
    page = await (await client.get(path)).text()
    assert "<img" not in page
    m = BEFORE_BUTTON.search(page)
    assert m and m.group(1) == "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;Eve"


async def test_an_expired_or_unknown_link_names_nobody(client, say: Chat, core: Core,
                                                      clock: VirtualClock) -> None:
    path = await link_for(say, "police_commander")
    clock.advance(timedelta(seconds=core.settings.web_link_ttl_seconds + 1))
    for where in (path, "/control/login/" + "A" * 32):
        page = await (await client.get(where)).text()
        assert "Match Commander" not in page and "Police commander" not in page
        assert 'id="signin"' in page  # pressing it says why the link is refused
