"""kill -9 of a real `matchday run` mid-burst loses no reply, card or tap, and doubles none."""

from __future__ import annotations

from rigs.crash import crash_run


async def test_kill_9_mid_burst_then_restart_loses_and_doubles_nothing(redis_url: str,
                                                                      monkeypatch):
    monkeypatch.setenv("REDIS_URL", redis_url)  # the session's server, not one of its own
    got = await crash_run(kill_after=3, settle=40, taps=6, lines=6)
    assert got["answered_before_kill"] < 12  # the kill really was mid-burst
    for name in ("acked_lost", "cards_never_delivered", "replies_never_delivered",
                 "taps_lost", "reports_lost", "telegram_429", "slack_429"):
        assert got[name] == 0, (name, got)
    # Sends left in doubt by the kill are looked up, never repeated: Slack by message
    # metadata, Telegram by forwarding the ids above the send's floor into the archive chat
    # the bench configures (see bot/delivery/durable.py).
    assert got["duplicates"] == 0, got["duplicated"]
