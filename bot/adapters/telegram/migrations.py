"""Groups Telegram upgraded to supergroups (a new chat id): recorded once for every replica,
said to the control room, and listed in /status."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping

from bot.domain.fixture.fixture_model import Fixture
from bot.domain.messages import Outbound, Reply
from bot.store import StoreUnavailable
from bot.store.chat_moves import ChatMoves

log = logging.getLogger(__name__)

PLATFORM = "telegram"
Send = Callable[[list[Outbound]], Awaitable[object]]


class ChatMigrations:
    """Chat moves: where the bot now posts for a chat Telegram moved."""

    def __init__(self, moves: ChatMoves, send: Send,
                 channels: Mapping[str, Mapping[str, list[str]]]) -> None:
        self.moves = moves
        self.send = send
        self.channels = channels  # audience -> platform -> chats (channels.toml)

    async def chat_moved(self, old: str, new: str) -> str:
        """A group became a supergroup (new id): persist the override, move live-message
        references, and (the first time, on any replica) tell the control room. Returns
        the chat to send to now."""
        if await self.moves.record(PLATFORM, old, new):
            names = self.audiences_of(old)
            note = Reply(f"Telegram upgraded the {names or 'group'} chat to a supergroup: the "
                         f"bot now posts to chat {new} (was {old}). Live incident messages "
                         "continue there.", title="Chat moved")
            outs = [Outbound("control", note)]
            if "control" not in names.split(", "):
                outs.append(Outbound(f"user:{PLATFORM}:{new}", note))
            await self.send(outs)
            log.warning("telegram: chat %s moved to %s (group upgraded to a supergroup)",
                        old, new)
        return new

    def audiences_of(self, chat: str) -> str:
        """The audiences (control, command…) configured with this Telegram chat."""
        return ", ".join(a for a, plats in self.channels.items()
                         if chat in plats.get(PLATFORM, []))

    async def status_lines(self, fx: Fixture) -> list[str]:
        """A /status part: chats Telegram moved (and where the bot now sends)."""
        try:
            moved = await self.moves.moved_from(PLATFORM)
        except StoreUnavailable:
            return []
        return [f"Telegram {self.audiences_of(old) or 'chat'} {old} moved to {new} "
                "(group upgraded to a supergroup)" for old, new in moved.items()]
