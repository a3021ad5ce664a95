"""Fixtures of the delivery tests."""

from __future__ import annotations

from rigs.fakes.slack_api import FakeSlack
from rigs.fakes.telegram_api import FakeTelegram
from tests.support.fakes import served

# The fake Slack Web API, enforcing Slack's limits.
slack_api = served("slack_api", FakeSlack, enforce_limits=True)


# The fake Bot API, enforcing Telegram's limits.
fake = served("fake", FakeTelegram, enforce_limits=True)
