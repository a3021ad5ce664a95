"""Inline-button callback data the bot itself issued: a short HMAC of the button's command
leads the data, so a client that sends arbitrary data (the Bot API warns any client can)
is refused instead of having it run as a command."""

from __future__ import annotations

import base64
import hashlib
import hmac

SIG_CHARS = 6  # base64url characters: 36 bits, checked on every press over the network


class CallbackSigner:
    """Sign a button's command into callback data; read it back only if the bot signed it."""

    def __init__(self, secret: str) -> None:
        self._key = hashlib.sha256(b"matchday-callback:" + secret.encode()).digest()

    def _sig(self, command: str) -> str:
        mac = hmac.new(self._key, command.encode(), hashlib.sha256).digest()
        return base64.urlsafe_b64encode(mac).decode()[:SIG_CHARS]

    def sign(self, command: str) -> str:
        """callback_data for a button whose press means `command` (which starts with '/')."""
        return self._sig(command) + command

    def verify(self, data: str) -> str | None:
        """The command the bot put in this callback data, or None if it did not issue it."""
        sig, command = data[:SIG_CHARS], data[SIG_CHARS:]
        if not command.startswith("/") or not hmac.compare_digest(sig, self._sig(command)):
            return None
        return command
