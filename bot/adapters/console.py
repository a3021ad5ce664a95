"""A terminal chat for the control-room PC and for drills: type commands, press buttons by
number, see what every audience is sent."""

from __future__ import annotations

import asyncio
import hashlib
import sys
import threading
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import IO

from bot.core.dispatch import Core
from bot.core.roles import Member
from bot.domain.bidi_controls import without_bidi_controls
from bot.domain.ledger import clean_text
from bot.domain.messages import Button, Command, Outbound, Reply
from bot.domain.vocab import ROLES

PASTE_COMMANDS = frozenset({"/deploy import"})  # commands whose lines follow them


def render_text(reply: Reply, numbered: bool = True) -> str:
    """A reply as plain text; buttons as [n] label lines when numbered."""
    lines = reply.lines()
    buttons = [b for row in reply.buttons for b in row]
    if buttons and numbered:
        lines.append("  " + "  ".join(f"[{i}] {b.label}" for i, b in enumerate(buttons, 1)))
    return without_bidi_controls("\n".join(lines))


class ConsoleAdapter:
    """Reads commands from a text stream and writes answers to another, on the app's loop."""

    platform = "console"

    def __init__(self, core: Core, as_role: str, *, stdin: IO[str] | None = None,
                 stdout: IO[str] | None = None, save_image: Callable[[bytes], Path] | None = None,
                 ) -> None:
        self.core = core
        self.stdin = stdin or sys.stdin
        self.stdout = stdout or sys.stdout
        self.user = as_role
        self.buttons: list[Button] = []
        self.save_image = save_image
        self._sent: Counter[str] = Counter()
        self._held: list[str] | None = None  # own messages a command sends, shown after its answer
        self._pasting: list[str] | None = None  # the lines of a rota being pasted
        self._prompt_shown = False  # the prompt is the last thing written: input awaited

    @property
    def prompt(self) -> str:
        """What the console shows where the user types."""
        return f"{self.user}> "

    def _show_prompt(self) -> None:
        self.stdout.write(self.prompt)
        self.stdout.flush()
        self._prompt_shown = True

    def _print(self, text: str) -> None:
        """Write a message; one arriving while input is awaited (an escalation, someone
        else's report) goes on a line of its own and the prompt is shown again under it."""
        if not self._prompt_shown:
            self.stdout.write(text + "\n")
            self.stdout.flush()
            return
        # A new line rather than erasing the prompt: what the user had half typed stays
        # visible above (the terminal still holds it and sends it with the next Enter).
        self.stdout.write("\n" + text + "\n")
        self._show_prompt()

    def _images(self, reply: Reply) -> str:
        """Lines saying where each chart of a reply was saved (to print after its text)."""
        if not self.save_image:
            return ""
        return "".join(f"\n  (chart saved to {self.save_image(png)})" for png in reply.images)

    async def tap(self, out: Outbound) -> None:
        if out.audience == f"user:console:{self.user}":
            text = "  ✉ " + render_text(out.reply, numbered=False).replace("\n", "\n    ")
            if self._held is not None:  # the rest of an answer: after its first part
                self._held.append(text)
            else:
                self._print(text)
            return
        text = render_text(out.reply, numbered=False).replace("\n", "\n    ")
        prefix = f"→ {out.audience}" + (f" (re {out.thread})" if out.thread else "")
        self._print(f"  {prefix}: {text}" + self._images(out.reply))

    def become(self, role: str) -> str:
        """Switch who you are (drills): any console roster member or role name."""
        key = ROLES.resolve(role)
        if key is None:
            return f"Unknown role '{role}'. Roles: {', '.join(ROLES.keys())}"
        self.user = key
        if f"console:{key}" not in self.core.roster:
            self.core.roster[f"console:{key}"] = Member("console", key, key, ROLES.label(key))
        return f"You are now {self.core.roster[f'console:{key}'].name} ({ROLES.label(key)})."

    def _dedupe_key(self, line: str) -> str:
        """Who, what and the minute it was typed, and how often this session typed it then:
        a console restarted and fed the same line again logs nothing twice, while a line
        typed twice in one session is two messages."""
        minute = self.core.clock.now().strftime("%Y%m%d%H%M")
        ident = hashlib.sha256(f"{self.user}\n{minute}\n{line}".encode()).hexdigest()[:24]
        self._sent[ident] += 1
        return f"console:{ident}:{self._sent[ident]}"

    async def say(self, line: str) -> None:
        """Handle one typed line, as if sent in a private chat; `/deploy import` alone takes
        the lines after it, up to an empty line, as the rota (one message, as a chat sends)."""
        line = clean_text(line.strip())  # undecodable bytes read as surrogates: U+FFFD
        if self._pasting is not None:
            if line:
                self._pasting.append(line)
                return
            line, self._pasting = "\n".join(self._pasting), None
        elif line.lower() in PASTE_COMMANDS:
            self._pasting = [line]
            self._print("Paste the rota's lines (steward id, name, post), then an empty line.")
            return
        if not line:
            return
        if line.startswith(":as "):
            self._print(self.become(line[4:].strip()))
            return
        if line.isdigit() and self.buttons and 1 <= int(line) <= len(self.buttons):
            line = self.buttons[int(line) - 1].command
        cmd = Command(platform="console", chat=self.user, user=self.user, text=line,
                      dedupe_key=self._dedupe_key(line))
        self._held = []
        try:
            result = await self.core.handle(cmd)
        finally:
            held, self._held = self._held, None
        if result is None:
            self._print("(no answer: nothing was done with that line)")
        else:
            self.buttons = [b for row in result.reply.buttons for b in row]
            self._print(render_text(result.reply) + self._images(result.reply))
        for text in held:
            self._print(text)

    def _reader(self, loop: asyncio.AbstractEventLoop, queue: asyncio.Queue[str]) -> None:
        for line in iter(self.stdin.readline, ""):
            loop.call_soon_threadsafe(queue.put_nowait, line)
        loop.call_soon_threadsafe(queue.put_nowait, "")

    async def run(self) -> None:
        """Read until end of input or /quit."""
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[str] = asyncio.Queue()
        if getattr(self.stdin, "errors", "") == "strict" and hasattr(self.stdin, "reconfigure"):
            # a strict reader dies on the first byte that is not UTF-8 and the chat hangs
            self.stdin.reconfigure(errors="replace")
        # A daemon thread, so a blocked read never holds up shutdown (Ctrl-C, SIGTERM).
        threading.Thread(target=self._reader, args=(loop, queue), daemon=True).start()
        self._print(self.become(self.user) + " Type /help, or :as <role> to switch. "
                    "Ctrl-D or /quit to leave.")
        while True:
            self._show_prompt()
            line = await queue.get()
            self._prompt_shown = False
            if not line or line.strip() in ("/quit", "/exit"):
                break
            await self.say(line)

    async def deliver(self, out: Outbound, chats: list[str]) -> None:
        """Console output is shown by the tap; nothing to route per chat."""

    async def start(self) -> None:
        """Nothing to start: run() drives it."""

    async def stop(self) -> None:
        """Nothing to stop."""
