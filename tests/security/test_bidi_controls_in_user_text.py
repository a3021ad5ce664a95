"""Issue 20, item 12: bidi controls in what people type cannot reorder a line in a chat card
or on the control-room screen; the log keeps them verbatim."""

from __future__ import annotations

import json
from pathlib import Path

from bot.adapters.console import render_text
from bot.adapters.slack.blocks import message_payload
from bot.adapters.telegram.render import render, toast
from bot.core.dispatch import Core
from tests.conftest import Chat
from tests.security.screens import sign_in

# a right-to-left override and friends: "bomb threat S5" displayed as "5S taerht bmob"
SPOOF = "\u202ebomb threat S5\u202c \u2067x\u2069\u200f\u200e\u061c\u202a\u202b\u202d\u2066\u2068"
BIDI_CONTROLS = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c"
CSS = Path(__file__).resolve().parents[2] / "bot" / "web" / "static" / "control.css"


async def test_chat_cards_carry_no_bidi_controls_and_the_log_keeps_them(say: Chat,
                                                                        core: Core) -> None:
    assert set(SPOOF) >= set(BIDI_CONTROLS)
    result = await say(f"/incident missile @seg_ne s2 {SPOOF}", as_="steward")
    assert result.reply.ok, result.reply.text
    cards = [o.reply for o in result.outbound] + [result.reply]
    assert any("bomb threat S5" in r.text for r in cards)
    for reply in cards:
        rendered = {
            "telegram": "".join(render(reply).chunks) + toast(reply),
            "slack": json.dumps(message_payload(reply), ensure_ascii=False),
            "console": render_text(reply),
        }
        for where, text in rendered.items():
            assert not set(text) & set(BIDI_CONTROLS), (where, text)
    fx = await core.active_fixture()
    [reported] = [e for e in await core.store.events(fx.id) if e.kind == "incident.reported"]
    assert SPOOF in reported.data["description"]  # verbatim in the log


async def test_the_screen_isolates_user_text(client, say: Chat) -> None:
    await say(f"/incident missile @seg_ne s2 {SPOOF}", as_="steward")
    await sign_in(client, say, "control")
    html = await (await client.get("/control/")).text()
    raw = html.split('id="state">', 1)[1].split("</script>", 1)[0]
    state = json.loads(raw)
    assert any(SPOOF in e["what"] for e in state["log"])  # as logged: the browser isolates
    css = CSS.read_text()
    rule = next(line for line in css.splitlines() if "unicode-bidi: isolate" in line)
    for cls in (".what", ".who", ".desc", ".owner", "bdi"):
        assert cls in rule
    assert '<div class="me"><bdi>' in html  # the member's name, rendered by the server
