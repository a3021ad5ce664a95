"""The stewarding lines of /status give the ground's local time, in summer (BST) as in
winter: a roll call taken at 17:30 BST reads 17:30, not the 16:30 of its UTC record."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from bot.domain.clock import VirtualClock

SUMMER = datetime(2026, 8, 15, 16, 30, tzinfo=UTC)  # 17:30 BST, kick-off 19:45 local


@pytest.fixture
def clock() -> VirtualClock:
    """A clock in British Summer Time."""
    return VirtualClock(SUMMER)


async def test_broadcast_and_roll_call_lines_read_local_time(say) -> None:
    await say("/broadcast stb keep the gangways clear", as_="control")
    status = (await say("/status", as_="control")).reply.text
    assert "📣" in status and "17:30" in status and "16:30" not in status
    await say("/rollcall", as_="control")
    status = (await say("/status", as_="control")).reply.text
    assert "Roll call 17:30" in status and "16:30" not in status
