"""Slack rendering: a platform-neutral Reply as validated Block Kit (slack-sdk models)."""

from __future__ import annotations

from typing import Any

from slack_sdk.models.blocks import (
    ActionsBlock,
    Block,
    ButtonElement,
    ContextBlock,
    DividerBlock,
    HeaderBlock,
    MarkdownTextObject,
    PlainTextObject,
    SectionBlock,
)
from slack_sdk.models.views import View

from bot.domain.bidi_controls import without_bidi_controls
from bot.domain.messages import Button, Reply

SECTION_MAX = 2900  # Slack allows 3000 characters of text per section
MESSAGE_BLOCKS_MAX = 50
VIEW_BLOCKS_MAX = 100
BUTTON_PREFIX = "cmd_"


def escape(text: str) -> str:
    """Slack's three control characters in user text: &, <, > (and bidi controls dropped)."""
    text = without_bidi_controls(text)
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _chunks(lines: list[str], limit: int = SECTION_MAX) -> list[str]:
    """Lines joined into pieces that each fit in one section block."""
    out: list[str] = []
    cur = ""
    for line in lines:
        while len(line) > limit:  # one enormous line: hard-split it
            if cur:
                out.append(cur)
                cur = ""
            out.append(line[:limit])
            line = line[limit:]
        if cur and len(cur) + 1 + len(line) > limit:
            out.append(cur)
            cur = line
        else:
            cur = f"{cur}\n{line}" if cur else line
    if cur:
        out.append(cur)
    return out


def button(b: Button, i: int) -> ButtonElement:
    """One Reply button: its command text travels in `value`, action_id is unique."""
    label = without_bidi_controls(b.label)
    return ButtonElement(text=PlainTextObject(text=label[:75] or "…", emoji=True),
                         action_id=f"{BUTTON_PREFIX}{i}", value=b.command[:2000],
                         style=b.style if b.style in ("primary", "danger") else None)


def button_rows(rows: list[list[Button]]) -> list[Block]:
    """Rows of buttons as actions blocks (action ids numbered across all rows)."""
    blocks: list[Block] = []
    i = 0
    for row in rows:
        elements = []
        for b in row[:25]:
            elements.append(button(b, i))
            i += 1
        if elements:
            blocks.append(ActionsBlock(elements=elements))
    return blocks


def reply_blocks(reply: Reply, *, buttons: bool = True, limit: int = MESSAGE_BLOCKS_MAX) \
        -> list[Block]:
    """Title in bold, text escaped, buttons as actions: every block validated."""
    blocks: list[Block] = []
    lines = [f"*{escape(reply.title)}*"] if reply.title else []
    lines += [escape(line) for line in reply.text.splitlines()]
    for piece in _chunks(lines or [" "]):
        blocks.append(SectionBlock(text=MarkdownTextObject(text=piece)))
    actions = button_rows(reply.buttons) if buttons else []
    room = max(0, limit - len(actions))
    if len(blocks) > room:
        blocks = blocks[: room - 1] + [ContextBlock(elements=[
            MarkdownTextObject(text="(truncated: ask for the full text with the command)")])]
    return blocks + actions


def to_dicts(blocks: list[Block]) -> list[dict[str, Any]]:
    """Validated JSON-ready blocks (slack-sdk raises on anything Slack would reject)."""
    return [b.to_dict() for b in blocks]


def fallback_text(reply: Reply, limit: int = 3000) -> str:
    """The notification / screen-reader text of a message."""
    text = " — ".join(x for x in (reply.title, reply.text.splitlines()[0] if reply.text else "")
                      if x)
    return escape(text)[:limit] or " "


def message_payload(reply: Reply) -> dict[str, Any]:
    """Keyword arguments for chat.postMessage / chat.update / respond."""
    return {"text": fallback_text(reply), "blocks": to_dicts(reply_blocks(reply))}


def home_view(reply: Reply, updated: str, more: list[Reply] | None = None) -> dict[str, Any]:
    """The App Home status board: the /status answer, rendered for the Home tab, then each
    of `more` (the stewarding plan per zone) under a divider."""
    extra: list[Block] = []
    for m in more or []:
        extra += [DividerBlock(), *reply_blocks(m, limit=(VIEW_BLOCKS_MAX - 3) // 3)]
    blocks: list[Block] = [HeaderBlock(text=PlainTextObject(text="Matchday status board"))]
    blocks += reply_blocks(reply, limit=VIEW_BLOCKS_MAX - 3 - len(extra))
    blocks += extra
    blocks += [DividerBlock(), ContextBlock(elements=[
        MarkdownTextObject(text=f"Updated {escape(updated)}. Refreshes when the log changes.")])]
    return View(type="home", blocks=blocks).to_dict()


def result_view(reply: Reply, title: str) -> dict[str, Any]:
    """A modal showing a command's answer (after a successful submission)."""
    return View(type="modal", title=PlainTextObject(text=title[:24]),
                close=PlainTextObject(text="Done"),
                blocks=reply_blocks(reply, buttons=False, limit=VIEW_BLOCKS_MAX)).to_dict()
