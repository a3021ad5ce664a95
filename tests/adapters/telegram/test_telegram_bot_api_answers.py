"""The fake Bot API answers every method the bot calls with the documented objects, read
back through python-telegram-bot itself (a field it requires missing fails here, not as an
error logged deep in delivery)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from telegram import Bot, InputMediaPhoto, Message, ReplyParameters
from telegram.error import BadRequest

from rigs.fakes.telegram_api import TOKEN, FakeTelegram

CONTROL = -1001000000001
STEWARD = 100000001


@pytest_asyncio.fixture
async def api() -> AsyncIterator[tuple[FakeTelegram, Bot]]:
    fake = FakeTelegram()
    await fake.start()
    bot = Bot(TOKEN, base_url=fake.base_url + "/bot", base_file_url=fake.base_url + "/file/bot")
    await bot.initialize()
    yield fake, bot
    await bot.shutdown()
    await fake.stop()


async def test_media_sent_again_by_file_id_comes_back_whole(api) -> None:
    fake, bot = api
    voice = {"file_id": "AwACvoice", "file_unique_id": "AgADv", "duration": 12,
             "mime_type": "audio/ogg"}
    update = fake.message_update(STEWARD, photo="AgACphoto")
    update["message"]["voice"] = voice
    card = await bot.send_message(CONTROL, "card")
    again = await bot.send_voice(CONTROL, "AwACvoice", caption="<b>Evidence</b>",
                                 parse_mode="HTML",
                                 reply_parameters=ReplyParameters(card.message_id))
    assert again.voice is not None and again.voice.duration == 12
    assert again.reply_to_message is not None and again.reply_to_message.text == "card"
    photo = await bot.send_photo(CONTROL, "AgACphoto")
    assert [p.width for p in photo.photo] == [90, 1280] and photo.photo[-1].file_id == "AgACphoto"
    upload = await bot.send_photo(STEWARD, b"\x89PNG chart")
    assert len(upload.photo) == 2 and upload.photo[-1].file_size == len(b"\x89PNG chart")
    doc = await bot.send_document(STEWARD, b"%PDF", filename="export.pdf")
    assert doc.document is not None and doc.document.file_id
    with pytest.raises(BadRequest, match="(?i)wrong file identifier"):
        await bot.send_video(CONTROL, "never-seen")


async def test_an_album_is_an_array_of_messages_counted_as_its_media(api) -> None:
    fake, bot = api
    fake.enforce_limits = True  # counted from here
    for k in range(3):
        fake.message_update(STEWARD, photo=f"AgACalbum{k}")
    album = await bot.send_media_group(
        CONTROL, [InputMediaPhoto(f"AgACalbum{k}", caption=f"Evidence {k}") for k in range(3)])
    assert all(isinstance(m, Message) for m in album) and len(album) == 3
    assert len({m.media_group_id for m in album}) == 1 and album[0].media_group_id
    assert [m.caption for m in album] == ["Evidence 0", "Evidence 1", "Evidence 2"]
    # three messages against the group's 20 a minute, one request against the chat's 1/s
    assert len(fake._sent_at[f"group:{CONTROL}"]) == 3
    fake.enforce_limits = False
    with pytest.raises(BadRequest):
        await bot.send_media_group(CONTROL, [InputMediaPhoto("AgACalbum0")])
