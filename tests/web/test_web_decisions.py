"""The decision log panel of the control-room view (issue 25 §1): in order, corrections kept
and marked in words, for the command roles only (denials audited)."""

from __future__ import annotations

from tests.support.web_session import (
    sign_in,
)


async def test_the_panel_shows_the_log_in_order_with_corrections_marked(client, say):  # noqa: F811
    await say("/decision d=Open gate F why=Queue at gate E", as_="control")
    await say("/decision d=Open gate G, not F why=Gate F is the away exit supersedes=D-1 "
              "type=gate", as_="safety_officer")
    await sign_in(client, say, "police_commander")
    resp = await client.get("/control/decisions")
    assert resp.status == 200
    html = await resp.text()
    assert html.index('id="D-1"') < html.index('id="D-2"')
    assert "SUPERSEDED by D-2" in html and "Open gate F" in html  # kept, marked in words
    assert "<dt>Supersedes</dt><dd>D-1</dd>" in html and "Gate F is the away exit" in html
    assert "<dt>Type</dt><dd>Closing or opening a gate</dd>" in html


async def test_the_panel_is_refused_to_other_roles(client, say, core):  # noqa: F811
    await say("/decision d=Open gate F why=Queue at gate E", as_="control")
    await sign_in(client, say, "viewer")
    resp = await client.get("/control/decisions")
    assert resp.status == 403 and "Open gate F" not in await resp.text()


async def test_the_live_screen_links_the_panel_for_command_roles_only(client, say):  # noqa: F811
    await sign_in(client, say, "safety_officer")
    assert 'href="decisions?fixture=' in await (await client.get("/control/")).text()
    await client.post("/control/logout", data={})
    other = await sign_in(client, say, "supervisor")
    assert other and 'Decision log</a>' not in await (await client.get("/control/")).text()
