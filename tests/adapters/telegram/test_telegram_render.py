"""Rendering Replies as Telegram HTML: escaping, 4096-character chunks, keyboards."""

from __future__ import annotations

from bot.adapters.telegram.render import MAX_TEXT, render, split_html, toast
from bot.domain.messages import Button, Reply


def test_user_strings_escaped_title_bold() -> None:
    r = render(Reply("said <b>& left", title="INC-1 <i>"))
    assert r.chunks == ["<b>INC-1 &lt;i&gt;</b>\nsaid &lt;b&gt;&amp; left"]


def test_long_text_split_at_line_boundaries() -> None:
    lines = [f"line {i:04d} " + "x" * 80 for i in range(200)]
    chunks = split_html("Title", "\n".join(lines))
    assert len(chunks) > 1
    assert all(len(c) <= MAX_TEXT for c in chunks)
    assert "\n".join(chunks) == "<b>Title</b>\n" + "\n".join(lines)  # nothing cut or lost


def test_overlong_line_never_cuts_an_entity() -> None:
    chunks = split_html("", "&" * 5000)
    assert all(len(c) <= MAX_TEXT for c in chunks)
    assert all(c.count("&") == c.count("&amp;") for c in chunks)
    assert sum(c.count("&amp;") for c in chunks) == 5000


def test_empty_text_still_sends_something() -> None:
    assert split_html("", "") == ["…"]
    assert split_html("", "\n \n") == ["…"]


def test_keyboards() -> None:
    r = render(Reply("x", buttons=[[Button("Ack", "/ack 7"), Button("Long", "/x " + "y" * 70)]],
                     request_location=True))
    assert [[b.callback_data for b in row] for row in r.keyboard.inline_keyboard] == [["/ack 7"]]
    assert r.location_keyboard.keyboard[0][0].request_location
    assert render(Reply("x", request_location=True), private=False).location_keyboard is None


def test_toast_fits_callback_answer() -> None:
    assert len(toast(Reply("y" * 500, title="t"))) == 200
