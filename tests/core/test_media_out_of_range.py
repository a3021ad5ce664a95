"""Issue 31, item 9: an attachment whose metadata is out of range (a voice note declaring
2^31 s, a negative length, a point off the Earth) is refused in one line, nothing is logged,
and its numbers are never shown ("35791394:08")."""

from __future__ import annotations

import pytest

from bot.core.dispatch import Core
from bot.domain.messages import MEDIA_MAX_S, Attachment
from tests.conftest import Chat

VOICE_REFUSED = "Voice notes up to 240 min are kept; this one's length is out of range. " \
                "Nothing was logged."
PLACE_REFUSED = "That location is not a point on the map (latitude -90 to 90, longitude " \
                "-180 to 180). Nothing was logged."


async def written(core: Core) -> int:
    fx = await core.active_fixture()
    assert fx is not None
    return len(await core.store.events(fx.id))


@pytest.mark.parametrize(("media", "refusal"), [
    (Attachment("voice", file_id="AwACbig", duration=2**31, platform="telegram"), VOICE_REFUSED),
    (Attachment("voice", file_id="AwACneg", duration=-5, platform="telegram"), VOICE_REFUSED),
    (Attachment("video", file_id="BAAlong", duration=MEDIA_MAX_S + 1, platform="telegram"),
     "Videos up to 240 min are kept; this one's length is out of range. Nothing was logged."),
    (Attachment("location", lat=91.0, lon=0.0, platform="telegram"), PLACE_REFUSED),
    (Attachment("location", lat=float("nan"), lon=0.0, platform="telegram"), PLACE_REFUSED),
])
async def test_out_of_range_media_is_refused_in_one_line_and_nothing_is_logged(
        say: Chat, core: Core, media: Attachment, refusal: str) -> None:
    await say("/incident pyro @stb_walkway s2 flare", as_="steward")
    before = await written(core)
    for text in ("", "/update INC-1 listen to this"):  # a new report, evidence for INC-1
        result = await say(text, as_="steward", attachments=(media,))
        assert result is not None and not result.reply.ok
        assert result.reply.text == refusal
    assert await written(core) == before
    fx = await core.active_fixture()
    assert fx is not None and await core.facades.forms.form(fx.id, "console:steward") is None
    assert "35791394" not in media.describe() and "nan" not in media.describe()


async def test_a_long_but_real_voice_note_is_kept(say: Chat, core: Core) -> None:
    await say("/incident pyro @stb_walkway s2 flare", as_="steward")
    note = Attachment("voice", file_id="AwACok", duration=MEDIA_MAX_S, platform="telegram")
    result = await say("/update INC-1 listen to this", as_="steward", attachments=(note,))
    assert result is not None and result.reply.ok, result.reply.text
    fx = await core.active_fixture()
    assert fx is not None
    assert (await core.store.incident(fx.id, 1)).evidence == 1
    assert "AwACok" in str((await core.store.events(fx.id))[-1].data)


@pytest.mark.parametrize("declared", ["abc", "nan", "inf", [1]])
def test_a_slack_file_declaring_a_length_that_is_no_number_is_refused_not_a_crash(
        declared: object) -> None:
    """Slack's duration_ms as a forged or broken event might carry it: the adapter made an
    int() of it and raised; now it is an out-of-range length the core refuses in one line."""
    from bot.adapters.slack.listeners.events import attachments

    files = {"files": [{"id": "F1", "mimetype": "audio/webm", "subtype": "slack_audio",
                        "duration_ms": declared}]}
    (got,) = attachments(files, "")
    assert got.fault is not None and got.fault.what == "duration"
