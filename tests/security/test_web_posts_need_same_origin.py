"""Issue 31, item 8: every POST of the control room (sign-in, sign-out, board buttons) is taken
only from the site's own pages: an Origin equal to the site's, or, without Origin, a
`Sec-Fetch-Site: same-origin`. Anything else (no header at all, `null`, another site) gets a
403 saying why, and changes nothing. Over real HTTP, with no header sent unless named."""

from __future__ import annotations

from aiohttp import ClientSession
from aiohttp.test_utils import TestClient

from bot.core.dispatch import Core
from bot.web.access import COOKIE
from bot.web.server import NOT_FROM_HERE
from tests.conftest import Chat
from tests.support.web_session import (
    link_for,
    refusals,
    sign_in,
)

REFUSED = [{}, {"Origin": "null"}, {"Origin": "https://evil.example"},
           {"Sec-Fetch-Site": "cross-site"}, {"Sec-Fetch-Site": "same-site"},
           {"Sec-Fetch-Site": "none"}]


async def post(client: TestClient, path: str, headers: dict[str, str], **kw: object
               ) -> tuple[int, str, bool]:
    """A POST carrying exactly these headers (and the client's cookies): status, body,
    whether it set a session cookie."""
    cookies = {c.key: c.value for c in client.session.cookie_jar}
    async with ClientSession(cookies=cookies) as bare, \
            bare.post(client.make_url(path), headers=headers, **kw) as resp:  # type: ignore[arg-type]
        return resp.status, await resp.text(), COOKIE in resp.cookies


async def test_a_sign_in_needs_the_sites_origin_or_same_origin_fetch_metadata(
        client: TestClient, say: Chat, core: Core) -> None:
    path = await link_for(say, "control")
    for headers in REFUSED:
        status, body, cookie = await post(client, path, headers)
        assert (status, cookie) == (403, False), headers
        assert NOT_FROM_HERE.split(":")[0] in body and "Traceback" not in body
    details = [a["detail"] for a in await refusals(core)]
    assert any("sign-in posted from no Origin, Sec-Fetch-Site absent" in d for d in details)
    assert any("sign-in posted from null" in d for d in details)
    # the link was not used up by any of them; the browser's own press works
    status, _, cookie = await post(client, path, {"Sec-Fetch-Site": "same-origin"})
    assert (status, cookie) == (200, True)
    again = await link_for(say, "viewer")
    origin = str(client.make_url("")).rstrip("/")
    status, _, cookie = await post(client, again, {"Origin": origin})
    assert (status, cookie) == (200, True)


async def test_sign_out_and_board_buttons_are_refused_from_elsewhere(
        client: TestClient, say: Chat, core: Core) -> None:
    await say("/incident missile @seg_ne s4 coins", as_="steward")
    csrf = await sign_in(client, say, "control")
    press = {"action": "ack", "incident": "INC-1", "id": "press-0101"}
    for headers in REFUSED:
        status, body, _ = await post(client, "/control/action",
                                     headers | {"X-CSRF-Token": csrf}, json=press)
        assert status == 403 and NOT_FROM_HERE in body, headers
        status, _, _ = await post(client, "/control/logout", headers, data={"csrf": csrf})
        assert status == 403, headers
    fx = await core.active_fixture()
    assert (await core.store.incident(fx.id, 1)).status == "reported"  # nothing written
    assert (await client.get("/control/")).status == 200  # still signed in
    status, body, _ = await post(client, "/control/action",
                                 {"Sec-Fetch-Site": "same-origin", "X-CSRF-Token": csrf},
                                 json=press)
    assert status == 200 and "INC-1 acknowledged" in body
    status, body, _ = await post(client, "/control/logout", {"Sec-Fetch-Site": "same-origin"},
                                 data={"csrf": csrf})
    assert status == 200 and "signed out" in body
