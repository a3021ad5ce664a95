"""A Telegram voice note's audio fetched (getFile and the file download) and transcribed by
the pool, or why not: the adapter's side of bot.voice."""

from __future__ import annotations

import logging
from collections.abc import Callable

from telegram import Bot
from telegram.error import TelegramError

from bot.domain.messages import Attachment
from bot.voice.outcome import NotHeard, Outcome
from bot.voice.pool import Transcriber

log = logging.getLogger(__name__)


def voice_note(attachments: tuple[Attachment, ...]) -> Attachment | None:
    """The voice note among a message's evidence, if any (one whose metadata is out of
    range is not fetched: the core refuses it)."""
    return next((a for a in attachments
                 if a.kind == "voice" and a.file_id and a.fault is None), None)


async def hear(bot: Bot, pool: Transcriber | None, note: Attachment,
               waiting: Callable[[int], None] = lambda ahead: None) -> Outcome:
    """The note's words, or why there are none (too long and a full pool are answered
    before anything is downloaded). A note that has to wait for a worker calls `waiting`
    at once with how many notes are ahead of it."""
    if pool is None:
        return NotHeard("not_installed")
    refused = pool.admit(note.duration)
    if refused is not None:
        return refused
    ahead = pool.ahead()
    if ahead:
        waiting(ahead)
    try:
        file = await bot.get_file(note.file_id)
        audio = bytes(await file.download_as_bytearray())
    except TelegramError as exc:
        pool.release()
        log.warning("voice: note not fetched from Telegram: %s", exc)
        return NotHeard("failed")
    except BaseException:
        pool.release()
        raise
    return await pool.transcribe(audio)
