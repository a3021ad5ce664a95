"""Telegram command menus: strangers see help and join, each member their role's commands."""

from __future__ import annotations

import asyncio
import hashlib
import logging
import re
from collections.abc import Iterable
from typing import Any

from telegram import BotCommand, BotCommandScopeChat, BotCommandScopeDefault
from telegram.error import TelegramError
from telegram.ext import ExtBot

from bot.core.dispatch import Spec
from bot.core.roles import STRANGER_COMMANDS, Member, RoleMatrix
from bot.store import StoreUnavailable
from bot.store.menus_given import MenusGiven

log = logging.getLogger(__name__)

PLATFORM = "telegram"
COMMAND_NAME = re.compile(r"[a-z0-9_]{1,32}")
AT_ONCE = 8  # menus being set at the same time (PTB's rate limiter paces the rest)


class Menus:
    """Sets the bot's command menus from the handlers' summaries and the role matrix."""

    def __init__(self, bot: ExtBot[Any], specs: dict[str, Spec], roles: RoleMatrix,
                 roster: dict[str, Member], given: MenusGiven) -> None:
        self.bot = bot
        self.specs = specs
        self.roles = roles
        self.roster = roster
        self.given = given

    def bot_commands(self, names: Iterable[str]) -> list[BotCommand]:
        """Menu entries for command names, described by the handlers' summaries."""
        out = []
        for name in names:
            spec = self.specs.get(name)
            if spec is None or spec.hidden or not COMMAND_NAME.fullmatch(name):
                continue
            out.append(BotCommand(name, (spec.summary or name)[:256]))
        return out[:100]

    def digest(self, role: str) -> str:
        """What a role's menu is (its entries), short: a changed menu has another."""
        entries = [(c.command, c.description) for c in
                   self.bot_commands(self.roles.commands_for(role))]
        return hashlib.sha256(repr(entries).encode()).hexdigest()[:16]

    async def set_default(self) -> None:
        """Strangers see help and join."""
        try:
            await self.bot.set_my_commands(self.bot_commands(sorted(STRANGER_COMMANDS, key=len)),
                                           scope=BotCommandScopeDefault())
        except TelegramError as exc:
            log.warning("telegram: default command menu not set: %s", exc)

    async def set_members(self) -> None:
        """Each roster member on Telegram gets their role's menu, unless they have it
        already (remembered in Redis): after the first start, only changed ones are set."""
        wanted = {m.user: self.digest(m.role) for m in self.roster.values()
                  if m.platform == PLATFORM}
        try:
            stale = await self.given.stale(wanted)
        except StoreUnavailable:  # the next start sets them
            return
        roles = {m.user: m.role for m in self.roster.values() if m.platform == PLATFORM}
        room = asyncio.Semaphore(AT_ONCE)

        async def one(user: str) -> None:
            async with room:
                await self.set_member_menu(user, roles[user])

        await asyncio.gather(*(one(u) for u in stale))

    async def set_member_menu(self, user: str, role: str) -> None:
        """One person's command menu (their private chat with the bot)."""
        try:
            await self.bot.set_my_commands(self.bot_commands(self.roles.commands_for(role)),
                                           scope=BotCommandScopeChat(int(user)))
            await self.given.given(user, self.digest(role))
        except (TelegramError, ValueError) as exc:  # e.g. they never opened the bot
            log.info("telegram: menu for %s not set: %s", user, exc)
        except StoreUnavailable:  # set again at the next start
            pass
