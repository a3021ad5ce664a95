"""Every kind of Telegram message content as evidence (Bot API "Message" fields voice, audio,
video, video_note, animation, sticker, document, photo, contact, venue, location), what cannot
be kept (polls, dice, games…), and showing kept media to control again by file id."""

from __future__ import annotations

import html
import re
from typing import Any

from telegram import Bot, InputMediaPhoto, InputMediaVideo, Message, ReplyParameters
from telegram.constants import ParseMode

from bot.domain.messages import Attachment, Reply, declared_seconds

PLATFORM = "telegram"
# Content the log cannot keep as evidence: named in the polite refusal.
NOT_KEPT = {"poll": "polls", "dice": "dice", "game": "games", "story": "stories",
            "invoice": "invoices", "giveaway": "giveaways", "paid_media": "paid media",
            "checklist": "checklists"}
# Media sent to control again by file id: Attachment kind -> Bot method and its file argument.
RESEND = {"photo": "send_photo", "document": "send_document", "voice": "send_voice",
          "audio": "send_audio", "video": "send_video", "video_note": "send_video_note",
          "animation": "send_animation", "sticker": "send_sticker"}
# Media whose send takes a caption (Bot API: not video notes or stickers), and its limit.
CAPTIONED = {"photo", "document", "voice", "audio", "video", "animation"}
CAPTION_MAX = 1024
# Media that can share an album (Bot API sendMediaGroup: photos and videos mix; documents
# and audio only with their own kind, which evidence bursts are not).
ALBUM = {"photo": InputMediaPhoto, "video": InputMediaVideo}
ALBUM_MAX = 10  # sendMediaGroup takes 2-10 items


def _raw(obj: Any) -> dict[str, Any]:
    """The object as the Bot API sent it (durations as plain seconds)."""
    return obj.to_dict() if obj is not None else {}


def _file(kind: str, obj: Any, caption: str, detail: str = "") -> Attachment:
    raw = _raw(obj)
    return Attachment(kind, file_id=str(raw.get("file_id", "")), caption=caption,
                      duration=declared_seconds(raw.get("duration")),
                      mime_type=str(raw.get("mime_type", "")),
                      detail=detail or str(raw.get("file_name", "")), platform=PLATFORM)


def attachments(msg: Message) -> tuple[Attachment, ...]:
    """A message's content as evidence records (empty for plain text)."""
    cap = msg.caption or ""
    out: list[Attachment] = []
    if msg.photo:
        out.append(_file("photo", msg.photo[-1], cap))
    if msg.animation:  # an animation also arrives as a document: keep it once
        out.append(_file("animation", msg.animation, cap))
    elif msg.document:
        out.append(_file("document", msg.document, cap))
    for kind in ("voice", "audio", "video", "video_note"):
        if getattr(msg, kind):
            out.append(_file(kind, getattr(msg, kind), cap))
    if msg.sticker:
        out.append(_file("sticker", msg.sticker, cap, detail=msg.sticker.emoji or ""))
    if msg.contact:
        c = msg.contact
        out.append(Attachment("contact", detail=f"{c.phone_number}".strip(),
                              caption=cap, platform=PLATFORM))
    if msg.venue:  # a location with a name: one location (forms' "where?" takes it too)
        v = msg.venue
        out.append(Attachment("location", lat=v.location.latitude, lon=v.location.longitude,
                              detail=f"{v.title}, {v.address}", platform=PLATFORM))
    elif msg.location:
        out.append(Attachment("location", lat=msg.location.latitude,
                              lon=msg.location.longitude, platform=PLATFORM,
                              live=live_key(msg) if msg.location.live_period else ""))
    return tuple(out)


def live_key(msg: Message) -> str:
    """A live location's key: its message (Telegram sends each new position as an edit of
    the message that shared it)."""
    return f"{PLATFORM}:{msg.chat_id}:{msg.message_id}"


def moved_location(msg: Message) -> Attachment | None:
    """An edited message's new position of a live location, or None (not a location)."""
    if msg.location is None:
        return None
    return Attachment("location", lat=msg.location.latitude, lon=msg.location.longitude,
                      platform=PLATFORM, live=live_key(msg), moved=True)


def not_kept(msg: Message) -> str:
    """What the message is when the log cannot keep it ('' when it can)."""
    return next((word for field, word in NOT_KEPT.items() if getattr(msg, field, None)), "")


def captioned(reply: Reply, chunks: list[str]) -> Attachment | None:
    """The one Telegram medium a reply can be sent as, its text the caption (an evidence
    line: one message instead of two), or None."""
    if reply.buttons or reply.images or reply.request_location or len(chunks) != 1:
        return None
    here = [a for a in reply.media if a.platform == PLATFORM]
    if len(here) != 1 or len(reply.media) != 1:
        return None
    a = here[0]
    if a.kind not in CAPTIONED or not a.file_id or len(_plain(chunks[0])) > CAPTION_MAX:
        return None
    return a


async def show_captioned(bot: Bot, chat_id: int | str, a: Attachment, caption: str,
                         quote: ReplyParameters | None) -> Message:
    """Send Telegram media again by file id with an HTML caption."""
    method = getattr(bot, RESEND[a.kind])
    msg: Message = await method(chat_id, a.file_id, caption=caption, parse_mode=ParseMode.HTML,
                                reply_parameters=quote)
    return msg


async def show_album(bot: Bot, chat_id: int | str, items: list[tuple[Attachment, str]],
                     quote: ReplyParameters | None) -> tuple[Message, ...]:
    """Send 2-10 photos/videos again by file id as one album, each with its HTML caption."""
    group = [ALBUM[a.kind](a.file_id, caption=caption, parse_mode=ParseMode.HTML)
             for a, caption in items]
    return await bot.send_media_group(chat_id, group, reply_parameters=quote)


def _plain(text: str) -> str:
    """What an HTML caption counts as (Telegram's limit is on the text without markup)."""
    return html.unescape(re.sub(r"<[^<>]+>", "", text)).strip()


async def show(bot: Bot, chat_id: int | str, media: list[Attachment],
               quote: ReplyParameters | None) -> list[Message]:
    """Send Telegram media to a chat again by file id (under the incident's message)."""
    sent: list[Message] = []
    for a in media:
        if a.platform != PLATFORM:
            continue  # another platform's file id means nothing here: the line says what
        if a.kind == "location" and a.lat is not None and a.lon is not None:
            sent.append(await bot.send_location(chat_id, a.lat, a.lon, reply_parameters=quote))
        elif a.kind in RESEND and a.file_id:
            method = getattr(bot, RESEND[a.kind])
            sent.append(await method(chat_id, a.file_id, reply_parameters=quote))
    return sent
