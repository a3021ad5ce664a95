"""Telegram command menus: strangers see help and join, each member their role's commands."""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Iterable
from typing import Any

from telegram import BotCommand, BotCommandScopeChat, BotCommandScopeDefault
from telegram.error import TelegramError
from telegram.ext import ExtBot

from bot.core.dispatch import Spec
from bot.core.roles import STRANGER_COMMANDS, Member, RoleMatrix

log = logging.getLogger(__name__)

PLATFORM = "telegram"
COMMAND_NAME = re.compile(r"[a-z0-9_]{1,32}")


class Menus:
    """Sets the bot's command menus from the handlers' summaries and the role matrix."""

    def __init__(self, bot: ExtBot[Any], specs: dict[str, Spec], roles: RoleMatrix,
                 roster: dict[str, Member]) -> None:
        self.bot = bot
        self.specs = specs
        self.roles = roles
        self.roster = roster

    def bot_commands(self, names: Iterable[str]) -> list[BotCommand]:
        """Menu entries for command names, described by the handlers' summaries."""
        out = []
        for name in names:
            spec = self.specs.get(name)
            if spec is None or spec.hidden or not COMMAND_NAME.fullmatch(name):
                continue
            out.append(BotCommand(name, (spec.summary or name)[:256]))
        return out[:100]

    async def set_all(self) -> None:
        """Strangers see help and join; each roster member on Telegram sees their role's."""
        try:
            await self.bot.set_my_commands(self.bot_commands(sorted(STRANGER_COMMANDS, key=len)),
                                           scope=BotCommandScopeDefault())
        except TelegramError as exc:
            log.warning("telegram: default command menu not set: %s", exc)
        members = [m for m in self.roster.values() if m.platform == PLATFORM]
        await asyncio.gather(*(self.set_member_menu(m.user, m.role) for m in members))

    async def set_member_menu(self, user: str, role: str) -> None:
        """One person's command menu (their private chat with the bot)."""
        try:
            await self.bot.set_my_commands(self.bot_commands(self.roles.commands_for(role)),
                                           scope=BotCommandScopeChat(int(user)))
        except (TelegramError, ValueError) as exc:  # e.g. they never opened the bot
            log.info("telegram: menu for %s not set: %s", user, exc)
