"""Which fixture a person or a chat works on (`/fixture use`), kept in Redis so every replica
sees the same choice at once; the deployment default (`{ops}:active`) is the fallback."""

from __future__ import annotations

from bot.store.base import OPS

USE = OPS + "use:"  # use:person:<platform>:<user>, use:chat:<platform>:<chat> -> fixture id
# A choice lasts one matchday: the next day people start again from the deployment default.
CHOICE_TTL = 36 * 3600


def person_choice(who: str) -> str:
    """The key of a person's fixture choice."""
    return f"{USE}person:{who}"


def chat_choice(platform: str, chat: str) -> str:
    """The key of a chat's fixture choice."""
    return f"{USE}chat:{platform}:{chat}"
