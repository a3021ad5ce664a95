"""The seams between the core and its adapters, typed: what an adapter may ask of the core."""

from __future__ import annotations

from typing import Protocol

from bot.core.roles import Member
from bot.domain.fixture.fixture_model import Fixture
from bot.domain.messages import Command, Result


class CoreAPI(Protocol):
    """The core as adapters see it: answer a command, know a person, the fixture a command
    is about, and what a role may run. Everything else an adapter uses is handed to it by
    the composition root (bot.adapters.parts.AdapterParts)."""

    async def handle(self, cmd: Command) -> Result | None:
        """Answer one command (None: not for the bot)."""

    async def member(self, who: str) -> Member | None:
        """A roster member or someone who joined by invite."""

    async def fixture_for(self, cmd: Command) -> Fixture | None:
        """The fixture a command applies to."""

    async def chat_member(self, platform: str, chat: str, user: str, joined: bool) -> None:
        """Someone joined or left a chat ('' with joined False: the bot itself left)."""

    def may(self, role: str | None, command: str, sub: str | None = None) -> bool:
        """May someone with this role (None: a stranger) run this (sub-)command?"""
