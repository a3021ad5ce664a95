"""A fake Telegram Bot API server (aiohttp on 127.0.0.1, random port) that records every call.

Serves what the adapter uses: getMe, getUpdates (long-poll on a queue the test pushes to),
setWebhook/deleteWebhook, sendMessage, editMessageText, forwardMessage, pin/unpinChatMessage
(`pinned`), setMessageReaction (`reactions`), answerCallbackQuery, setMyCommands,
send<Media> (an upload, or a file id seen before: answered with the documented "Message"
fields, e.g. photo as an array of PhotoSize),
sendLocation, sendMediaGroup, getFile and file downloads. Message ids are numbered like
Telegram's: per chat in supergroups and channels (ids -100…), and from the bot's one common
sequence in private chats and basic groups. Any method can be made to fail for its next N
calls (e.g. 429 with retry_after). Tests wait with `await fake.wait_for(...)`.

Like the real server it serves many bots at once, each by the token in its URLs
(`add_bot`): every bot has its own identity, updates, messages and limits. A bad token is
answered as api.telegram.org answers it: 404 "Not Found" when it is not <bot id>:<secret>
at all (python-telegram-bot's notes on the API's answers), 401 "Unauthorized: invalid token
specified" for one tdlib/telegram-bot-api's ClientManager::send refuses by its shape (starts
with 0, over 80 characters, bot id out of range), and 401 "Unauthorized" for a well-formed
one no bot has, or no longer has (revoked).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from rigs.fakes import PATIENCE_S

TOKEN = "123456789:TEST-fake-token_for-tests"
BOT_ID = 123456789
BOT_USERNAME = "matchday_test_bot"
LIMITED = {"sendmessage", "editmessagetext", "sendphoto", "senddocument", "sendmediagroup",
           "editmessagereplymarkup", "editmessagecaption", "forwardmessage",
           "pinchatmessage", "unpinchatmessage",  # a pin counts like a message in a group
           "setmessagereaction"}  # no figure is published: counted like a message, to be safe
# Telegram's standard reaction emoji a bot may set (ReactionTypeEmoji), as far as used here
REACTIONS = frozenset("👍👎❤🔥👏🙏👌🤝✍👀🫡")
# The fields the Bot API always sets on each media object beyond file_id/file_unique_id
# (an upload's; a file id sent again returns the object it was first seen with).
MEDIA_FIELDS: dict[str, dict[str, Any]] = {
    "voice": {"duration": 1, "mime_type": "audio/ogg"},
    "audio": {"duration": 1, "mime_type": "audio/mpeg"},
    "video": {"width": 640, "height": 360, "duration": 1, "mime_type": "video/mp4"},
    "video_note": {"length": 240, "duration": 1},
    "animation": {"width": 320, "height": 240, "duration": 1, "mime_type": "video/mp4"},
    "sticker": {"type": "regular", "width": 512, "height": 512, "is_animated": False,
                "is_video": False},
    "document": {"file_name": "file", "mime_type": "application/octet-stream"},
}
FOLDERS = {"photo": "photos", "document": "documents", "sticker": "stickers"}
BOT_USER = {"id": BOT_ID, "is_bot": True, "first_name": "Matchday", "username": BOT_USERNAME}
# a ChatMemberAdministrator's rights (PTB reads every one)
ADMIN_RIGHTS = ("is_anonymous", "can_manage_chat", "can_delete_messages",
                "can_manage_video_chats", "can_restrict_members", "can_promote_members",
                "can_change_info", "can_invite_users", "can_post_stories", "can_edit_stories",
                "can_delete_stories", "can_post_messages", "can_edit_messages",
                "can_pin_messages")
# what Telegram sends a bot that names no allowed_updates: all but these
NOT_BY_DEFAULT = ("chat_member", "message_reaction", "message_reaction_count")
_INT_KEYS = {"offset", "limit", "timeout", "retry_after", "cache_time", "max_connections"}


@dataclass
class Call:
    """One request the bot made: method name (as Telegram spells it) and decoded params."""

    method: str
    params: dict[str, Any]
    files: dict[str, bytes] = field(default_factory=dict)
    ok: bool = True
    at: float = field(default_factory=time.monotonic)  # when the fake received it


@dataclass
class Failure:
    """An injected error for the next `times` calls of a method."""

    times: int
    code: int
    description: str
    retry_after: int | None = None


def _decode(key: str, value: str) -> Any:
    """Telegram clients send JSON-encoded values for non-strings; decode what clearly is."""
    v = value.strip()
    if v[:1] in "[{":
        try:
            return json.loads(v)
        except ValueError:
            return value
    if (key in _INT_KEYS or key.endswith("_id")) and v.lstrip("-").isdigit():
        return int(v)
    if v in ("true", "false") and key not in ("text", "caption", "data"):
        return v == "true"
    return value


def _shape_error(token: str) -> tuple[int, str] | None:
    """The error a token of the wrong shape gets before any bot is looked up, or None."""
    bot_id, colon, _ = token.partition(":")
    if not colon or not bot_id.isdigit():
        return 404, "Not Found"
    if token.startswith("0") or len(token) > 80 or not 0 < int(bot_id) < 1 << 54:
        return 401, "Unauthorized: invalid token specified"
    return None


class FakeTelegram:
    """The fake server. `await start()` returns its base URL (no /bot suffix)."""

    def __init__(self, token: str = TOKEN, poll_wait: float = 0.2, latency: float = 0.0,
                 record: bool = True, enforce_limits: bool = False,
                 clock: Callable[[], float] = time.monotonic, username: str = "") -> None:
        self.token = token
        # this bot's identity (a bot's id is the number its token starts with)
        self.bot_id = BOT_ID if token == TOKEN else int(token.partition(":")[0])
        self.username = username or (BOT_USERNAME if token == TOKEN
                                     else f"club{self.bot_id}_bot")
        self.bot_user = {"id": self.bot_id, "is_bot": True, "first_name": "Matchday",
                         "username": self.username}
        self.bots: dict[str, FakeTelegram] = {token: self}  # token -> the bot it serves
        self.revoked: set[str] = set()
        self.poll_wait = poll_wait  # longest an empty getUpdates waits for a push
        self.latency = latency  # simulated network time per call (benchmarks only)
        self.record = record  # keep every call (off for long benchmark runs)
        self.calls: list[Call] = []
        self.failures: dict[str, Failure] = {}
        self.messages: dict[tuple[int, int], dict[str, Any]] = {}
        self.files: dict[str, bytes] = {}
        self.held: dict[str, asyncio.Event] = {}  # file paths whose download waits for a set()
        # chat id -> sends to it wait for a set() before they are answered (a slow network)
        self.stalled: dict[int, asyncio.Event] = {}
        self.tapped_by: dict[str, int] = {}  # callback query id -> the user who tapped
        self.webhook: dict[str, Any] = {}
        self.migrated: dict[int, int] = {}  # basic group id -> its supergroup id
        self.unknown: set[int] = set()  # chats the bot cannot see (see `forget`)
        self.pinned: dict[int, list[int]] = {}  # chat id -> pinned message ids, newest last
        self.reactions: dict[tuple[int, int], list[str]] = {}  # the bot's, on a message
        self._pending: list[tuple[dict[str, Any], bool]] = []  # (update, ignore_offset)
        self._update_ids = itertools.count(1000)
        self._message_ids = itertools.count(1)  # the bot's common sequence (private, groups)
        self._channel_ids: dict[int, int] = {}  # supergroup/channel -> its last message id
        self.incoming: dict[tuple[int, int], dict[str, Any]] = {}  # users' messages
        self._html: set[tuple[int, int]] = set()  # messages sent with parse_mode HTML
        self._cond: asyncio.Condition | None = asyncio.Condition()
        self._updates_cond: asyncio.Condition | None = asyncio.Condition()
        self._runner: web.AppRunner | None = None
        self.base_url = ""
        # Telegram's documented limits, answered with 429 + retry_after when broken: sends and
        # edits together ~1/s per chat, 20/min per group, 30/s per bot. The windows are a
        # little shorter than the limits so a well-behaved client's network jitter passes.
        self.enforce_limits = enforce_limits
        self.clock = clock
        self.too_many = 0  # 429s answered for a broken limit
        self.too_many_at: list[str] = []  # "method chat window" of each: who broke which
        self._broke = ""  # the window the last refused send would have broken
        self.polls = 0  # getUpdates calls (a polling bot is up)
        self.confirmed = 0  # the highest offset asked for: updates below it are confirmed
        self.downloaded: list[str] = []  # file paths served, in order
        self._sent_at: dict[str, list[float]] = {}
        # Chats with members (channels, groups): id -> kind, and who is in each. A message
        # reaches a person when it is accepted: a private message its user, a post in a
        # channel or group every member at once (`reached`: user -> (at, chat, message id)).
        self.kinds: dict[int, str] = {}
        self._titles: dict[int, str] = {}
        self.members: dict[int, set[int]] = {}
        self.reached: dict[int, list[tuple[float, int, int]]] = {}
        # the wall clock a sent message's date (Telegram's accept time, whole seconds) is read
        # from: a test sets its injected clock here to check times recorded against it
        self.wall: Callable[[], float] = time.time
        # update kinds the bot asked for (getUpdates / setWebhook allowed_updates); Telegram
        # sends chat_member updates only to a bot that names them
        self.allowed: list[str] | None = None

    # ---------------------------------------------------------------- lifecycle
    async def start(self) -> str:
        """Listen on a random local port."""
        return await self.start_on(0)

    async def start_on(self, port: int) -> str:
        """Listen on a local port (0: any free one)."""
        self._cond = asyncio.Condition()
        self._updates_cond = asyncio.Condition()
        app = web.Application(client_max_size=50 * 1024 * 1024)
        app.router.add_route("*", "/bot{token}/{method}", self._api)
        app.router.add_get("/file/bot{token}/{path:.*}", self._file)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", port)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self.base_url = f"http://127.0.0.1:{port}"
        for bot in self.bots.values():
            bot.base_url = self.base_url
        return self.base_url

    async def stop(self) -> None:
        """Stop listening."""
        if self._runner is not None:
            await self._runner.cleanup()

    # ---------------------------------------------------------------- many bots
    def add_bot(self, token: str, username: str = "") -> FakeTelegram:
        """Serve another bot on this server; its own fake state (bot_id, username, calls,
        updates, messages, limits) is returned."""
        assert _shape_error(token) is None, f"Telegram would not accept the token {token!r}"
        bot = FakeTelegram(token, self.poll_wait, self.latency, self.record,
                           self.enforce_limits, self.clock, username)
        bot.base_url = self.base_url
        self.bots[token] = bot
        return bot

    def bot(self, token: str) -> FakeTelegram:
        """The state of the bot a token belongs to."""
        return self.bots[token]

    def sent_by(self, token: str) -> list[Call]:
        """Successful sendMessage calls made with one bot's token."""
        return self.bots[token].calls_of("sendMessage")

    def revoke(self, token: str) -> None:
        """The token is revoked (@BotFather /revoke): every later call with it answers 401
        Unauthorized; other bots are unaffected."""
        self.revoked.add(token)

    def _refused(self, token: str) -> web.Response | None:
        """The error a call with this token gets, or None for a bot being served."""
        error = _shape_error(token)
        if error is None and (token in self.revoked or token not in self.bots):
            error = 401, "Unauthorized"
        if error is None:
            return None
        return web.json_response({"ok": False, "error_code": error[0],
                                  "description": error[1]}, status=error[0])

    # ---------------------------------------------------------------- test controls
    def next_update_id(self) -> int:
        """A fresh update id."""
        return next(self._update_ids)

    async def push(self, update: dict[str, Any], *, redeliver: bool = False) -> dict[str, Any]:
        """Queue an update for getUpdates. `redeliver` serves it even if its id was confirmed
        (what Telegram does when a bot died before confirming)."""
        update.setdefault("update_id", self.next_update_id())
        assert self._updates_cond is not None
        async with self._updates_cond:
            self._pending.append((update, redeliver))
            self._updates_cond.notify_all()
        return update

    def add_chat(self, chat_id: int, kind: str = "channel", title: str = "Stewards") -> None:
        """A channel or group the bot administers (negative id), with no members yet."""
        self.kinds[chat_id] = kind
        self.members.setdefault(chat_id, set())
        self._titles[chat_id] = title

    def member_update(self, chat_id: int, user_id: int, joined: bool = True) -> dict[str, Any]:
        """Someone joins (or leaves) a chat now; the chat_member update Telegram sends the
        bot about it (push it)."""
        (self.members.setdefault(chat_id, set()).add if joined
         else self.members.setdefault(chat_id, set()).discard)(user_id)
        return self._member_change("chat_member", chat_id, self.user(user_id), joined)

    def bot_member_update(self, chat_id: int, joined: bool) -> dict[str, Any]:
        """The bot is added to (an administrator) or removed from a chat: my_chat_member."""
        return self._member_change("my_chat_member", chat_id, dict(self.bot_user), joined,
                                   "administrator")

    def _member_change(self, kind: str, chat_id: int, who: dict[str, Any], joined: bool,
                       status: str = "member") -> dict[str, Any]:
        old, new = ("left", status) if joined else (status, "left")
        return {"update_id": self.next_update_id(), kind: {
            "chat": self.chat(chat_id), "from": who, "date": int(time.time()),
            "old_chat_member": self._chat_member(old, who),
            "new_chat_member": self._chat_member(new, who)}}

    @staticmethod
    def _chat_member(status: str, who: dict[str, Any]) -> dict[str, Any]:
        m: dict[str, Any] = {"status": status, "user": who}
        if status == "administrator":
            m.update({k: k in ("can_post_messages", "can_edit_messages", "can_pin_messages")
                      for k in ADMIN_RIGHTS})
            m["can_be_edited"] = False
        return m

    def first_reached(self, user_id: int, text: str = "") -> float | None:
        """When a message (containing `text`) first reached a person, or None."""
        for at, chat, mid in self.reached.get(user_id, []):
            if text in str(self.messages.get((chat, mid), {}).get("text", "")):
                return at
        return None

    def fail(self, method: str, times: int = 1, *, code: int = 429,
             description: str = "Too Many Requests: retry after 1",
             retry_after: int | None = 1) -> None:
        """Make the next `times` calls of `method` fail with this error."""
        self.failures[method.lower()] = Failure(times, code, description, retry_after)

    def migrate(self, old: int, new: int) -> None:
        """Upgrade a group to a supergroup, as Telegram does: the history moves (same message
        ids) and every later call naming the old id answers 400 with
        parameters.migrate_to_chat_id (Bot API "ResponseParameters")."""
        self.migrated[int(old)] = int(new)
        for (chat, mid), msg in list(self.messages.items()):
            if chat == int(old):
                self.messages[(int(new), mid)] = {**msg, "chat": self.chat(int(new))}
                self._channel_ids[int(new)] = max(self._channel_ids.get(int(new), 0), mid)

    def forget(self, chat_id: int) -> None:
        """A chat deleted, or one the bot was never in: every later call naming it answers
        400 "Bad Request: chat not found", as Telegram does."""
        self.unknown.add(int(chat_id))

    def migration_updates(self, old: int, new: int, by: int) -> list[dict[str, Any]]:
        """The two service messages Telegram sends on an upgrade (Bot API "Message" fields
        migrate_to_chat_id in the old group, migrate_from_chat_id in the new supergroup)."""
        now = int(time.time())
        return [
            {"update_id": self.next_update_id(), "message": {
                "message_id": next(self._message_ids), "date": now, "from": self.user(by),
                "chat": self.chat(old, kind="group"), "migrate_to_chat_id": new}},
            {"update_id": self.next_update_id(), "message": {
                "message_id": 1, "date": now, "from": self.user(by),
                "chat": self.chat(new), "migrate_from_chat_id": old}},
        ]

    def calls_of(self, method: str, ok_only: bool = True) -> list[Call]:
        """Recorded calls of one method (successful ones unless ok_only=False)."""
        m = method.lower()
        return [c for c in self.calls if c.method.lower() == m and (c.ok or not ok_only)]

    def sent_to(self, chat_id: int | str) -> list[Call]:
        """Successful sendMessage calls to one chat."""
        return [c for c in self.calls_of("sendMessage") if str(c.params.get("chat_id")) ==
                str(chat_id)]

    async def wait_for(self, predicate: Callable[[list[Call]], Any],
                       timeout: float = PATIENCE_S) -> Any:
        """Wait until predicate(calls) is truthy; return its value (TimeoutError otherwise)."""
        assert self._cond is not None
        async with self._cond:
            result: Any = None

            def check() -> bool:
                nonlocal result
                result = predicate(self.calls)
                return bool(result)

            try:
                await asyncio.wait_for(self._cond.wait_for(check), timeout)
            except TimeoutError:
                raise AssertionError(f"condition not met within {timeout}s; calls:\n"
                                     f"{self.describe()}") from None
            return result

    def describe(self, last: int = 30) -> str:
        """The last calls, one line each (for failure messages)."""
        return "\n".join(
            f"{'ok ' if c.ok else 'ERR'} {c.method} {c.params.get('chat_id', '')} "
            f"{c.params.get('message_id', '')} {str(c.params.get('text', ''))[:120]!r}"
            for c in self.calls[-last:])

    # ---------------------------------------------------------------- builders
    @staticmethod
    def user(user_id: int, first_name: str = "Test", username: str = "") -> dict[str, Any]:
        """A Telegram User object."""
        u: dict[str, Any] = {"id": user_id, "is_bot": False, "first_name": first_name}
        if username:
            u["username"] = username
        return u

    def chat(self, chat_id: int, title: str = "Control room", kind: str = "") -> dict[str, Any]:
        """A private chat for positive ids, a supergroup (or `kind`, or the kind it was
        added as) for negative ones."""
        if chat_id > 0:
            return {"id": chat_id, "type": "private", "first_name": "Test"}
        return {"id": chat_id, "type": kind or self.kinds.get(chat_id, "supergroup"),
                "title": self._titles.get(chat_id, title)}

    def message_update(self, user_id: int, text: str = "", *, chat_id: int | None = None,
                       photo: str = "", caption: str = "", location: tuple[float, float] |
                       None = None, reply_to: dict[str, Any] | None = None,
                       first_name: str = "Test", live_period: int = 0) -> dict[str, Any]:
        """An update carrying a message (text, photo or location) from a user."""
        chat_id = user_id if chat_id is None else chat_id
        msg: dict[str, Any] = {
            "message_id": self.next_message_id(chat_id), "date": int(time.time()),
            "chat": self.chat(chat_id), "from": self.user(user_id, first_name),
        }
        if text:
            msg["text"] = text
            if text.startswith("/"):
                msg["entities"] = [{"type": "bot_command", "offset": 0,
                                    "length": len(text.split(" ", 1)[0])}]
        if photo:
            msg["photo"] = [
                {"file_id": photo + "-s", "file_unique_id": photo + "s", "width": 90,
                 "height": 90},
                {"file_id": photo, "file_unique_id": photo + "l", "width": 1280, "height": 960},
            ]
        if caption:
            msg["caption"] = caption
        if location:
            msg["location"] = {"latitude": location[0], "longitude": location[1]}
            if live_period:  # a live location: later positions arrive as edits of it
                msg["location"]["live_period"] = live_period
        if reply_to:
            msg["reply_to_message"] = reply_to
        self.incoming[(chat_id, msg["message_id"])] = msg
        return {"update_id": self.next_update_id(), "message": msg}

    def voice_update(self, user_id: int, audio: bytes, duration: int, *,
                     chat_id: int | None = None, reply_to: dict[str, Any] | None = None,
                     file_id: str = "") -> dict[str, Any]:
        """An update carrying a voice note (Bot API "Voice": OGG/Opus) whose audio the bot
        can fetch with getFile and the file download (as Telegram keeps what users send)."""
        update = self.message_update(user_id, chat_id=chat_id, reply_to=reply_to)
        fid = file_id or f"AwACvoice{update['update_id']}"
        self.files[f"voice/{fid}.oga"] = audio
        update["message"]["voice"] = {"file_id": fid, "file_unique_id": fid + "u",
                                      "duration": duration, "mime_type": "audio/ogg",
                                      "file_size": len(audio)}
        return update

    def location_moved(self, shared: dict[str, Any], lat: float, lon: float,
                       at: int | None = None) -> dict[str, Any]:
        """The update Telegram sends when a live location (the update that shared it) moves:
        an edited_message with the new position, its live_period and edit_date."""
        msg = dict(shared["message"])
        msg["location"] = {**msg["location"], "latitude": lat, "longitude": lon}
        msg["edit_date"] = at if at is not None else int(time.time())
        return {"update_id": self.next_update_id(), "edited_message": msg}

    def next_message_id(self, chat_id: int) -> int:
        """The id Telegram gives the next message in a chat: sequential within a supergroup
        or channel; one sequence across the bot's private chats and basic groups."""
        if not str(chat_id).startswith("-100"):
            return next(self._message_ids)
        n = self._channel_ids.get(chat_id, 0) + 1
        self._channel_ids[chat_id] = n
        return n

    def callback_update(self, user_id: int, message: dict[str, Any], data: str,
                        first_name: str = "Test") -> dict[str, Any]:
        """An update for a press of an inline button on a message the bot sent."""
        query = str(self.next_update_id())
        self.tapped_by[query] = user_id
        return {"update_id": self.next_update_id(), "callback_query": {
            "id": query, "from": self.user(user_id, first_name),
            "chat_instance": "ci-1", "message": message, "data": data}}

    def message(self, chat_id: int, message_id: int) -> dict[str, Any]:
        """The current state of a message the bot sent (edits applied)."""
        return self.messages[(int(chat_id), int(message_id))]

    # ---------------------------------------------------------------- server side
    async def _record(self, call: Call) -> None:
        if not self.record:
            return
        assert self._cond is not None
        async with self._cond:
            self.calls.append(call)
            self._cond.notify_all()

    async def _params(self, request: web.Request) -> tuple[dict[str, Any], dict[str, bytes]]:
        params: dict[str, Any] = dict(request.query)
        files: dict[str, bytes] = {}
        ctype = request.content_type
        if ctype == "application/json":
            body = await request.read()
            if body:
                params.update(json.loads(body))
            return params, files
        if ctype.startswith("multipart/"):
            reader = await request.multipart()
            async for part in reader:
                if part.filename is not None:  # type: ignore[union-attr]
                    files[part.name or ""] = await part.read()  # type: ignore[union-attr]
                else:
                    params[part.name or ""] = await part.text()  # type: ignore[union-attr]
        elif request.can_read_body:
            params.update(await request.post())
        return {k: _decode(k, v) if isinstance(v, str) else v for k, v in params.items()}, files

    async def _api(self, request: web.Request) -> web.Response:
        token = request.match_info["token"]
        refused = self._refused(token)
        if refused is not None:
            return refused
        return await self.bots[token]._answer(request)

    async def _answer(self, request: web.Request) -> web.Response:
        """Answer one call to this bot."""
        method = request.match_info["method"]
        params, files = await self._params(request)
        if self.latency and method.lower() != "getupdates":
            await asyncio.sleep(self.latency)
        stall = self.stalled.get(int(params["chat_id"])) \
            if str(params.get("chat_id", "")).lstrip("-").isdigit() else None
        if stall is not None and method.lower().startswith("send"):
            await stall.wait()
        tapper = self.tapped_by.get(str(params.get("callback_query_id", "")))
        if method == "answerCallbackQuery" and tapper in self.stalled:
            await self.stalled[tapper].wait()  # a slow answer to this one person's tap
        call = Call(method, params, files, at=self.clock())
        moved = self.migrated.get(int(params["chat_id"])) \
            if str(params.get("chat_id", "")).lstrip("-").isdigit() else None
        if moved is not None:
            call.ok = False
            await self._record(call)
            return web.json_response({
                "ok": False, "error_code": 400,
                "description": "Bad Request: group chat was upgraded to a supergroup chat",
                "parameters": {"migrate_to_chat_id": moved}}, status=400)
        if str(params.get("chat_id", "")).lstrip("-").isdigit() and \
                int(params["chat_id"]) in self.unknown:
            call.ok = False
            await self._record(call)
            return web.json_response({"ok": False, "error_code": 400,
                                      "description": "Bad Request: chat not found"}, status=400)
        fail = self.failures.get(method.lower())
        if fail and fail.times > 0:
            fail.times -= 1
            call.ok = False
            await self._record(call)
            body: dict[str, Any] = {"ok": False, "error_code": fail.code,
                                    "description": fail.description}
            if fail.retry_after is not None:
                body["parameters"] = {"retry_after": fail.retry_after}
            return web.json_response(body, status=fail.code)
        if method.lower() == "forwardmessage" and self._forwarded(params) is None:
            call.ok = False  # nothing posted, so not counted towards the limits
            await self._record(call)
            return web.json_response({"ok": False, "error_code": 400, "description":
                                      "Bad Request: message to forward not found"}, status=400)
        if self.enforce_limits and method.lower() in LIMITED:
            # An album is as many messages as it has media against the group and bot-wide
            # limits, one call against the per-chat pace. Telegram publishes no figure for
            # albums: its limits are per message (Bots FAQ: at most 20 messages a minute in
            # a group), sendMediaGroup returns one Message per item and paid broadcasts bill
            # it per message; bot authors report an album of two photos counted as two
            # (github.com/astrolabsoftware/fink-filters/pull/156). Nothing says it is one.
            cost = len(params["media"]) if method.lower() == "sendmediagroup" and \
                isinstance(params.get("media"), list) else 1
            wait = self._over_limit(str(params.get("chat_id", "")), cost,
                                    edit=method.lower().startswith("edit"))
            if wait:
                self.too_many += 1
                self.too_many_at.append(f"{method} {params.get('chat_id', '')} {self._broke}")
                call.ok = False
                await self._record(call)
                return web.json_response(
                    {"ok": False, "error_code": 429,
                     "description": f"Too Many Requests: retry after {wait}",
                     "parameters": {"retry_after": wait}}, status=429)
        handler = getattr(self, "_m_" + method.lower(), None)
        if handler is None:
            await self._record(call)
            return web.json_response({"ok": True, "result": True})
        try:
            result = await handler(params, files)
        except _ApiError as exc:
            call.ok = False
            await self._record(call)
            return web.json_response({"ok": False, "error_code": exc.code,
                                      "description": exc.description}, status=exc.code)
        if method.lower() != "getupdates" or result:
            await self._record(call)
        return web.json_response({"ok": True, "result": result})

    def _over_limit(self, chat: str, cost: int = 1, edit: bool = False) -> int:
        """0 and the send counted (`cost` messages), or the whole seconds to wait (a limit
        would break). An edit in a private chat (a button's answer edited into its message)
        counts only bot-wide: the one-a-second per chat is Telegram's figure for messages
        sent to a chat, and inline menus edit on every tap (an assumption: no figure is
        published)."""
        now = self.clock()
        private = not chat.startswith(("-", "@"))
        windows = [("bot", 30, 0.95)] if edit and private else \
            [(f"chat:{chat}", 1, 0.9), ("bot", 30, 0.95)]
        if chat.startswith("-"):
            windows.append((f"group:{chat}", 20, 57.0))
        wait = 0.0
        for key, count, per in windows:
            times = [t for t in self._sent_at.get(key, []) if t > now - per]
            self._sent_at[key] = times
            room = count if key.startswith("chat:") else count - cost + 1  # an album: at once
            if len(times) >= room:
                oldest = times[len(times) - max(room, 1)] if room > 0 else now
                wait = max(wait, oldest + per - now, 1e-3)
                self._broke = (f"{key.partition(':')[0]} {count}/{per:g}s, the oldest "
                               f"{now - oldest:.3f}s ago")
        if wait > 0:
            return max(1, int(wait + 0.999))
        for key, _, _ in windows:
            self._sent_at[key] += [now] * cost
        return 0

    async def _file(self, request: web.Request) -> web.Response:
        path = request.match_info["path"]
        token = request.match_info["token"]
        if self._refused(token) is not None:
            return web.Response(status=401)
        bot = self.bots[token]
        data = bot.files.get(path)
        if data is None:
            return web.Response(status=404)
        if path in bot.held:  # a test holds this download (a slow phone signal)
            await bot.held[path].wait()
        bot.downloaded.append(path)
        return web.Response(body=data)

    # ---------------------------------------------------------------- methods
    async def _m_getme(self, p: dict, f: dict) -> dict[str, Any]:
        return {**self.bot_user, "can_join_groups": True,
                "can_read_all_group_messages": False, "supports_inline_queries": False}

    async def _m_getupdates(self, p: dict, f: dict) -> list[dict[str, Any]]:
        self.polls += 1
        offset = int(p.get("offset") or 0)
        self.confirmed = max(self.confirmed, offset)
        limit = int(p.get("limit") or 100)
        wait = min(float(p.get("timeout") or 0), self.poll_wait)
        assert self._updates_cond is not None

        if "allowed_updates" in p:
            self.allowed = list(p["allowed_updates"]) or None

        def ready() -> list[dict[str, Any]]:
            # Confirmed updates (id < offset) are forgotten unless forced to redeliver, and
            # kinds the bot did not ask for are never sent.
            self._pending = [(u, r) for u, r in self._pending
                             if (r or u["update_id"] >= offset) and self._wanted(u)]
            return [u for u, _ in self._pending][:limit]

        async with self._updates_cond:
            if not ready() and wait > 0:
                try:
                    await asyncio.wait_for(self._updates_cond.wait_for(lambda: bool(ready())),
                                           wait)
                except TimeoutError:
                    pass
            out = ready()
            # a forced redelivery is served once, then behaves like any update
            self._pending = [(u, False) for u, _ in self._pending]
            return out

    def _wanted(self, update: dict[str, Any]) -> bool:
        kinds = [k for k in update if k != "update_id"]
        if self.allowed is None:
            return not any(k in NOT_BY_DEFAULT for k in kinds)
        return not kinds or any(k in self.allowed for k in kinds)

    async def _m_setwebhook(self, p: dict, f: dict) -> bool:
        self.webhook = dict(p)
        if "allowed_updates" in p:
            self.allowed = list(p["allowed_updates"]) or None
        return True

    async def _m_deletewebhook(self, p: dict, f: dict) -> bool:
        self.webhook = {}
        return True

    async def _m_getwebhookinfo(self, p: dict, f: dict) -> dict[str, Any]:
        return {"url": self.webhook.get("url", ""), "has_custom_certificate": False,
                "pending_update_count": 0}

    async def _m_setmycommands(self, p: dict, f: dict) -> bool:
        for c in p.get("commands", []):
            if not (1 <= len(c["command"]) <= 32 and 1 <= len(c["description"]) <= 256):
                raise _ApiError(400, "Bad Request: BOT_COMMAND_INVALID")
        return True

    async def _m_answercallbackquery(self, p: dict, f: dict) -> bool:
        if len(str(p.get("text", ""))) > 200:
            raise _ApiError(400, "Bad Request: MESSAGE_TOO_LONG")
        return True

    def _new_message(self, p: dict[str, Any], **content: Any) -> dict[str, Any]:
        chat_id = int(p["chat_id"])
        msg: dict[str, Any] = {
            "message_id": self.next_message_id(chat_id), "date": int(self.wall()),
            "chat": self.chat(chat_id), "from": dict(self.bot_user), **content,
        }
        if self.kinds.get(chat_id) == "channel":  # a channel post is signed by the channel
            msg.pop("from")
            msg["sender_chat"] = self.chat(chat_id)
        if isinstance(p.get("reply_markup"), dict) and "inline_keyboard" in p["reply_markup"]:
            msg["reply_markup"] = p["reply_markup"]
        quoted = p.get("reply_parameters")
        if isinstance(quoted, dict):  # the replied-to message, one level deep, as Telegram
            key = (int(quoted.get("chat_id") or chat_id), int(quoted.get("message_id") or 0))
            replied = self.messages.get(key) or self.incoming.get(key)
            if replied is not None:
                msg["reply_to_message"] = {k: v for k, v in replied.items()
                                           if k != "reply_to_message"}
            elif not quoted.get("allow_sending_without_reply"):
                raise _ApiError(400, "Bad Request: message to be replied not found")
        now = self.clock()
        for user in ([chat_id] if chat_id > 0 else self.members.get(chat_id, ())):
            self.reached.setdefault(user, []).append((now, chat_id, msg["message_id"]))
        self.messages[(chat_id, msg["message_id"])] = msg
        if p.get("parse_mode") == "HTML":
            self._html.add((chat_id, msg["message_id"]))
        return msg

    def _forwarded(self, p: dict[str, Any]) -> dict[str, Any] | None:
        """The message forwardMessage names (one the bot sent or a user's), or None."""
        if not str(p.get("from_chat_id", "")).lstrip("-").isdigit():
            return None
        key = (int(p["from_chat_id"]), int(p.get("message_id") or 0))
        return self.messages.get(key) or self.incoming.get(key)

    async def _m_forwardmessage(self, p: dict, f: dict) -> dict[str, Any]:
        """A copy in the target chat, as Telegram shows it: plain text (entities not
        modelled), no keyboard, forward_origin naming the original sender."""
        src = self._forwarded(p)
        assert src is not None
        key = (int(p["from_chat_id"]), int(p["message_id"]))
        content = {k: v for k, v in src.items() if k in ("text", "caption", "photo",
                                                          "document", "location")}
        for k in ("text", "caption"):
            if k in content and key in self._html:
                content[k] = _plain(content[k])
        origin = {"type": "user", "sender_user": src["from"], "date": src["date"]}
        return self._new_message({"chat_id": p["chat_id"]}, forward_origin=origin,
                                 forward_from=src["from"], forward_date=src["date"],
                                 **content)

    @staticmethod
    def _check_text(text: str, parse_mode: str | None, limit: int = 4096) -> None:
        if not text:
            raise _ApiError(400, "Bad Request: message text is empty")
        if len(text) > limit:
            raise _ApiError(400, "Bad Request: message is too long")
        if parse_mode == "HTML":
            _check_html(text)

    async def _m_sendmessage(self, p: dict, f: dict) -> dict[str, Any]:
        text = str(p.get("text", ""))
        self._check_text(text, p.get("parse_mode"))
        return self._new_message(p, text=text)

    async def _m_editmessagetext(self, p: dict, f: dict) -> dict[str, Any] | bool:
        """The edited Message; True for an inline message (Bot API: "Message or True")."""
        if p.get("inline_message_id"):
            return True
        key = (int(p["chat_id"]), int(p["message_id"]))
        msg = self.messages.get(key)
        if msg is None:
            raise _ApiError(400, "Bad Request: message to edit not found")
        text = str(p.get("text", ""))
        self._check_text(text, p.get("parse_mode"))
        markup = p.get("reply_markup") if isinstance(p.get("reply_markup"), dict) else None
        if msg.get("text") == text and msg.get("reply_markup") == markup:
            raise _ApiError(400, "Bad Request: message is not modified: specified new message "
                                 "content and reply markup are exactly the same as a current "
                                 "content and reply markup of the message")
        msg["text"] = text
        msg["edit_date"] = int(time.time())
        if markup:
            msg["reply_markup"] = markup
        else:
            msg.pop("reply_markup", None)
        return msg

    async def _m_pinchatmessage(self, p: dict, f: dict) -> bool:
        chat, mid = int(p["chat_id"]), int(p["message_id"])
        if (chat, mid) not in self.messages:
            raise _ApiError(400, "Bad Request: message to pin not found")
        pins = self.pinned.setdefault(chat, [])
        if mid in pins:
            pins.remove(mid)
        pins.append(mid)
        return True

    async def _m_setmessagereaction(self, p: dict, f: dict) -> bool:
        chat, mid = int(p["chat_id"]), int(p["message_id"])
        if (chat, mid) not in self.incoming and (chat, mid) not in self.messages:
            raise _ApiError(400, "Bad Request: message to react not found")
        raw = p.get("reaction") or []
        given = json.loads(raw) if isinstance(raw, str) else raw
        emoji = [r.get("emoji", "") for r in given if r.get("type") == "emoji"]
        if len(emoji) != len(given) or any(e not in REACTIONS for e in emoji) or \
                len(emoji) > 1:  # a bot sets at most one reaction
            raise _ApiError(400, "Bad Request: REACTION_INVALID")
        self.reactions[(chat, mid)] = emoji
        return True

    async def _m_unpinchatmessage(self, p: dict, f: dict) -> bool:
        chat = int(p["chat_id"])
        pins = self.pinned.get(chat, [])
        mid = int(p["message_id"]) if p.get("message_id") else (pins[-1] if pins else 0)
        if mid not in pins:
            raise _ApiError(400, "Bad Request: message to unpin not found")
        pins.remove(mid)
        return True

    # Media sent again by file id comes back as Telegram describes it ("Message" fields photo:
    # array of PhotoSize, voice: Voice, …, each with its required fields); an upload gets a
    # new file id. An unknown file id is refused like Telegram refuses it.
    def _known_media(self, kind: str, fid: str) -> Any:
        """The media object (PhotoSize array for photos) a file id was seen with, or None."""
        for msg in [*self.incoming.values(), *self.messages.values()]:
            obj = msg.get(kind)
            if kind == "photo" and isinstance(obj, list) and \
                    any(size.get("file_id") == fid for size in obj):
                return [dict(size) for size in obj]
            if isinstance(obj, dict) and obj.get("file_id") == fid:
                return dict(obj)
        return None

    def _media(self, p: dict[str, Any], f: dict[str, bytes], kind: str) -> Any:
        """The media object a send<Kind> posts: the known one for a file id, a new one for
        an upload (sized like Telegram's defaults)."""
        given = p.get(kind)
        if isinstance(given, str) and given:
            known = self._known_media(kind, given)
            if known is None:
                raise _ApiError(400, "Bad Request: wrong file identifier/HTTP URL specified")
            return known
        data = next(iter(f.values()), b"")
        n = len(self.files) + 1
        fid = f"{kind}-{n}"
        self.files[f"{FOLDERS.get(kind, kind + 's')}/{fid}"] = data
        base = {"file_id": fid, "file_unique_id": fid + "u", "file_size": len(data)}
        if kind == "photo":  # a thumbnail and the picture itself, smallest first
            return [{**base, "file_id": fid + "-s", "file_unique_id": fid + "su",
                     "width": 90, "height": 68, "file_size": max(1, len(data) // 20)},
                    {**base, "width": 800, "height": 600}]
        return {**base, **MEDIA_FIELDS.get(kind, {})}

    def _send_media(self, p: dict[str, Any], f: dict[str, bytes], kind: str) -> dict[str, Any]:
        caption = str(p.get("caption", ""))
        if caption:
            self._check_text(caption, p.get("parse_mode"), 1024)
        obj = self._media(p, f, kind)
        content: dict[str, Any] = {kind: obj}
        if kind == "animation":  # Bot API: "the document field will also be set"
            content["document"] = {k: v for k, v in obj.items()
                                   if k in ("file_id", "file_unique_id", "file_name",
                                            "mime_type", "file_size")}
        if caption:
            content["caption"] = caption
        return self._new_message(p, **content)

    async def _m_sendphoto(self, p: dict, f: dict) -> dict[str, Any]:
        return self._send_media(p, f, "photo")

    async def _m_senddocument(self, p: dict, f: dict) -> dict[str, Any]:
        return self._send_media(p, f, "document")

    async def _m_sendvoice(self, p: dict, f: dict) -> dict[str, Any]:
        return self._send_media(p, f, "voice")

    async def _m_sendaudio(self, p: dict, f: dict) -> dict[str, Any]:
        return self._send_media(p, f, "audio")

    async def _m_sendvideo(self, p: dict, f: dict) -> dict[str, Any]:
        return self._send_media(p, f, "video")

    async def _m_sendvideonote(self, p: dict, f: dict) -> dict[str, Any]:
        return self._send_media(p, f, "video_note")

    async def _m_sendanimation(self, p: dict, f: dict) -> dict[str, Any]:
        return self._send_media(p, f, "animation")

    async def _m_sendsticker(self, p: dict, f: dict) -> dict[str, Any]:
        return self._send_media(p, f, "sticker")

    async def _m_sendmediagroup(self, p: dict, f: dict) -> list[dict[str, Any]]:
        """An album: 2-10 photos/videos (or documents, or audio, not mixed with the others),
        each by file id or an attach://<name> upload, captions per item; an array of
        Message sharing one media_group_id, the first replying where asked."""
        items = p.get("media")
        if not isinstance(items, list) or not 2 <= len(items) <= 10:
            raise _ApiError(400, "Bad Request: wrong number of media in the album (2-10)")
        kinds = {str(i.get("type")) for i in items if isinstance(i, dict)}
        if len(kinds) > 1 and not kinds <= {"photo", "video"}:
            raise _ApiError(400, "Bad Request: documents and audio can't be mixed with other "
                                 "media types in an album")
        for item in items:  # Telegram takes the whole album or none of it
            ref = item.get("media")
            if isinstance(ref, str) and not ref.startswith("attach://") and \
                    self._known_media(str(item.get("type")), ref) is None:
                raise _ApiError(400, "Bad Request: wrong file identifier/HTTP URL specified")
        group = str(next(self._update_ids))
        out = []
        for n, item in enumerate(items):
            kind, ref = str(item.get("type")), item.get("media")
            given = {"chat_id": p["chat_id"], "caption": item.get("caption", ""),
                     "parse_mode": item.get("parse_mode")}
            files: dict[str, bytes] = {}
            if isinstance(ref, str) and ref.startswith("attach://"):
                files = {ref[9:]: f.get(ref[9:], b"")}
            else:
                given[kind] = ref
            if n == 0 and p.get("reply_parameters"):
                given["reply_parameters"] = p["reply_parameters"]
            msg = self._send_media(given, files, kind)
            msg["media_group_id"] = group
            out.append(msg)
        return out

    async def _m_sendlocation(self, p: dict, f: dict) -> dict[str, Any]:
        return self._new_message(p, location={"latitude": float(p["latitude"]),
                                              "longitude": float(p["longitude"])})

    async def _m_getfile(self, p: dict, f: dict) -> dict[str, Any]:
        fid = str(p.get("file_id", ""))
        path = next((k for k in self.files if k.split("/")[-1].split(".")[0] == fid),
                    f"photos/{fid}.jpg")
        if len(self.files.get(path, b"")) > 20 * 1024 * 1024:  # bots may fetch up to 20 MB
            raise _ApiError(400, "Bad Request: file is too big")
        return {"file_id": fid, "file_unique_id": fid + "u", "file_path": path,
                "file_size": len(self.files.get(path, b""))}


class _ApiError(Exception):
    def __init__(self, code: int, description: str) -> None:
        super().__init__(description)
        self.code = code
        self.description = description


_ALLOWED_TAGS = {"b", "strong", "i", "em", "u", "ins", "s", "strike", "del", "a", "code",
                 "pre", "tg-spoiler", "span", "blockquote", "tg-emoji"}


def _plain(html: str) -> str:
    """What a message sent with parse_mode HTML reads as (its text without the markup)."""
    import html as _h
    import re

    return _h.unescape(re.sub(r"<[^<>]+>", "", html)).strip()


def _check_html(text: str) -> None:
    """Reject what Telegram's HTML parser rejects: unknown tags, bare '<' or '&'."""
    import re

    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "<":
            m = re.match(r"</?([a-zA-Z-]+)(\s[^<>]*)?>", text[i:])
            if not m or m.group(1).lower() not in _ALLOWED_TAGS:
                raise _ApiError(400, f"Bad Request: can't parse entities: unsupported start "
                                     f"tag at byte offset {i}")
            i += m.end()
            continue
        if ch == "&":
            m = re.match(r"&(#\d+|#x[0-9a-fA-F]+|lt|gt|amp|quot);", text[i:])
            if not m:
                raise _ApiError(400, f"Bad Request: can't parse entities: character '&' at "
                                     f"byte offset {i}")
            i += m.end()
            continue
        i += 1


async def _serve(port: int, latency_ms: float, limits: bool = False) -> None:
    fake = FakeTelegram(latency=latency_ms / 1000, record=False, enforce_limits=limits)
    await fake.start_on(port)
    print(fake.base_url, flush=True)
    await asyncio.Event().wait()


def main() -> None:
    """Serve the fake standalone (benchmarks run it in its own process, like a real server):
    python -m rigs.fakes.telegram_api [--port N] [--latency-ms MS]; prints its base URL."""
    import argparse

    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--latency-ms", type=float, default=0.0)
    args = ap.parse_args()
    try:
        asyncio.run(_serve(args.port, args.latency_ms))
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
