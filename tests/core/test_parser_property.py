"""Whatever anyone types, the bot answers in a line or two and never raises."""

from __future__ import annotations

import string

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.domain.vocab import INCIDENT_TYPES, OFFENCES, PHASES
from handlers.incident.reporting import parse_severity

words = st.sampled_from(["/incident", "/ack", "/resolve", "/arrest", "/ban", "/fixture",
                         "/phase", "/update", "/form", "/status", "/join", "/help", "/inc",
                         "/report", "@stb_walkway", "s4", "x3", "inc=1", "ref=", "aff=away",
                         "missile", "vd", "add", "use", "v", "2026-13-45", "25:99", '"', "'",
                         "\x01", "<b>&", "1", "INC-1", "-1", "=", "@", "/"])
texts = st.one_of(
    st.text(max_size=200),
    st.lists(st.one_of(words, st.text(string.printable, max_size=12)), max_size=8).map(" ".join),
)
roles = st.sampled_from(["steward", "control", "police_liaison", "admin", "viewer"])
FAST = settings(max_examples=150, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture])


@FAST
@given(text=texts, role=roles)
async def test_arbitrary_text_never_raises_and_always_answers(say, text, role):
    r = await say(text, as_=role)
    if r is None:  # only possible for empty text
        assert not text.strip()
        return
    assert r.reply.text.strip()
    assert "Traceback" not in r.reply.text


@given(st.text(max_size=30))
def test_vocabularies_never_raise(word):
    for vocab in (INCIDENT_TYPES, OFFENCES, PHASES):
        key = vocab.resolve(word)
        assert key is None or key in vocab.labels
        assert all(k in vocab.labels for k in vocab.suggest(word))
    assert parse_severity(word) in (None, 1, 2, 3, 4, 5)
