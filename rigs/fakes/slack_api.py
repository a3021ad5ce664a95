"""A small fake of the Slack Web API and Socket Mode server for adapter tests.

An aiohttp server on 127.0.0.1 (random port). It records every call with its decoded
parameters (form or JSON), answers like Slack does for the methods the bot uses, accepts
file uploads at the URL it hands out, serves `response_url`s, and acts as a Socket Mode
websocket server that can push an envelope and records the client's ack.
Tests wait with `wait_for` (an asyncio.Condition and a timeout), never with fixed sleeps.

Like Slack it serves many workspaces at once (`add_workspace`): a Web API call goes to the
workspace its bot token belongs to, each with its own messages and rate limits. After
`uninstall` its token is revoked: every call answers HTTP 200 `{"ok": false, "error":
"token_revoked"}`, as Slack answers a token revoked by an uninstall; a token no workspace
has answers "invalid_auth" (when the workspace names its token) or "not_authed" (none given).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlencode

from aiohttp import WSMsgType, web

from rigs.fakes import PATIENCE_S

JSON_PARAMS = {"blocks", "view", "files", "attachments", "channels", "metadata"}
# The bot token scope each method needs (docs.slack.dev/reference/methods/<method>, "Required
# scopes"); a token without it is answered like Slack does: HTTP 200, ok false,
# error "missing_scope", with the scope `needed` and the ones `provided`.
NEEDS_SCOPE = {
    "chat.postMessage": "chat:write", "chat.update": "chat:write",
    "chat.postEphemeral": "chat:write", "pins.add": "pins:write", "pins.remove": "pins:write",
    "conversations.open": "im:write", "conversations.history": "channels:history",
    "conversations.replies": "channels:history", "users.info": "users:read",
    "files.getUploadURLExternal": "files:write", "files.completeUploadExternal": "files:write",
}


@dataclass
class Call:
    """One recorded request."""

    method: str  # Web API method, "upload", "respond" or "ws.ack"
    params: dict[str, Any]
    token: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    at: float = field(default_factory=time.monotonic)  # when the fake received it
    ok: bool = True  # False: answered 429 for a broken rate limit


class FakeSlack:
    """Start with `await fake.start()`; point `AsyncWebClient(base_url=fake.api_url)` at it."""

    def __init__(self, team_id: str = "T0TEAM", bot_user: str = "U0BOT", *,
                 enterprise_id: str | None = None, enterprise_install: bool = False,
                 enforce_limits: bool = False,
                 clock: Callable[[], float] = time.monotonic,
                 scopes: set[str] | None = None, bot_token: str | None = None,
                 signing_secret: str = "") -> None:
        # Slack's documented limits, "per API method per workspace per app"
        # (https://docs.slack.dev/apis/web-api/rate-limits), answered with 429 + Retry-After
        # when broken: chat.postMessage ~1/s per channel (no published workspace-wide number),
        # chat.update Tier 3 (~50/min per workspace), pins.add and pins.remove Tier 2
        # (~20/min each). Windows are a little shorter than the limits so a well-behaved
        # client's network jitter passes. `clock` times the windows and each recorded call.
        self.enforce_limits = enforce_limits
        self.clock = clock
        self.scopes = scopes  # the bot token's scopes (None: every scope a method needs)
        self.too_many = 0
        self._sent_at: dict[str, list[float]] = {}
        self.team_id = team_id
        self.bot_token = bot_token  # the token its calls must carry (None: any)
        self.signing_secret = signing_secret or SIGNING_SECRET
        self.installed = True  # False after uninstall: its token is revoked
        self.workspaces: dict[str, FakeSlack] = {team_id: self}  # team id -> its state
        self.enterprise_id = enterprise_id
        self.enterprise_install = enterprise_install
        self.bot_user = bot_user
        self.calls: list[Call] = []
        self.messages: dict[tuple[str, str], dict[str, Any]] = {}  # (channel, ts) -> params
        self.pins: dict[str, list[str]] = {}  # channel -> pinned message ts, newest last
        self.uploads: dict[str, bytes] = {}
        self.acks: dict[str, dict[str, Any]] = {}  # envelope_id -> ack message
        self.failures: dict[str, list[tuple[int, dict[str, str], dict[str, Any]]]] = {}
        self.respond_429 = 0  # how many response_url posts to answer 429 next
        self.lost: dict[str, asyncio.Event] = {}  # channel -> set when its network mends
        self._ts = itertools.count(1)
        self._ids = itertools.count(1)
        self._cond = asyncio.Condition()
        self._ws: web.WebSocketResponse | None = None
        self._runner: web.AppRunner | None = None
        self.base = ""

    # ------------------------------------------------------------------ lifecycle
    async def start(self) -> str:
        """Serve on a random local port; returns the Web API base URL."""
        app = web.Application()
        app.router.add_post("/api/{method}", self._api)
        app.router.add_get("/api/{method}", self._api)  # conversations.history is a GET
        app.router.add_post("/upload/{file_id}", self._upload)
        app.router.add_post("/respond/{key}", self._respond)
        app.router.add_get("/socket", self._socket)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self.base = f"http://127.0.0.1:{port}"
        for workspace in self.workspaces.values():
            workspace.base = self.base
        return self.api_url

    async def stop(self) -> None:
        """Close the websocket and the server."""
        if self._ws is not None and not self._ws.closed:
            await self._ws.close()
        if self._runner is not None:
            await self._runner.cleanup()

    @property
    def api_url(self) -> str:
        """Base URL for AsyncWebClient (with the trailing slash slack-sdk expects)."""
        return f"{self.base}/api/"

    def response_url(self, key: str) -> str:
        """A response_url to put in slash command and block action payloads."""
        return f"{self.base}/respond/{key}"

    # ------------------------------------------------------------------ many workspaces
    def add_workspace(self, team_id: str, bot_token: str, signing_secret: str,
                      bot_user: str = "U0BOT") -> FakeSlack:
        """Install the app in another workspace served here; returns its own fake state
        (calls, messages, rate limits), reached by calls carrying `bot_token`."""
        workspace = FakeSlack(team_id, bot_user, enforce_limits=self.enforce_limits,
                              clock=self.clock, scopes=self.scopes, bot_token=bot_token,
                              signing_secret=signing_secret)
        workspace.base = self.base
        self.workspaces[team_id] = workspace
        return workspace

    def workspace(self, team_id: str) -> FakeSlack:
        """The state of one workspace."""
        return self.workspaces[team_id]

    def posted_by(self, team_id: str) -> list[Call]:
        """Successful chat.postMessage calls in one workspace."""
        return [c for c in self.workspaces[team_id].of("chat.postMessage") if c.ok]

    def uninstall(self, team_id: str) -> None:
        """The app is uninstalled from a workspace: its token is revoked from now on."""
        self.workspaces[team_id].installed = False

    def _for_token(self, token: str) -> FakeSlack:
        """The workspace a bot token belongs to (this one for any other token)."""
        return next((w for w in self.workspaces.values() if w.bot_token == token), self)

    def _unauthed(self, token: str) -> str:
        """The error Slack answers a call with this token, or "" when it is let in."""
        if not self.installed:
            return "token_revoked"
        if self.bot_token is not None and not token:
            return "not_authed"
        if self.bot_token is not None and token != self.bot_token:
            return "invalid_auth"
        return ""

    def signed_event(self, team_id: str, event: dict[str, Any], event_id: str = "Ev0001"
                     ) -> tuple[str, dict[str, str]]:
        """An Events API callback from a workspace: JSON body and the headers Slack signs
        it with (that workspace's signing secret)."""
        workspace = self.workspaces[team_id]
        body = event_body(event, event_id, team=team_id, bot_user=workspace.bot_user)
        return body, signed_headers(body, secret=workspace.signing_secret,
                                    content_type="application/json")

    def signed_action(self, team_id: str, payload: dict[str, Any]
                      ) -> tuple[str, dict[str, str]]:
        """An interactivity request (payload=<json> form) from a workspace, signed with its
        signing secret."""
        workspace = self.workspaces[team_id]
        body = interactive_body({**payload, "team": {"id": team_id}})
        return body, signed_headers(body, secret=workspace.signing_secret)

    # ------------------------------------------------------------------ queries
    def of(self, method: str) -> list[Call]:
        """Recorded calls of one method, oldest first."""
        return [c for c in self.calls if c.method == method]

    def lose(self, channel: str) -> None:
        """Requests about `channel` hang and are never carried out (a network path lost),
        until `mend(channel)`, which fails them (503) and lets later ones through."""
        self.lost.setdefault(channel, asyncio.Event())

    def mend(self, channel: str) -> None:
        """The channel's path is back: the hung requests fail, later ones go through."""
        event = self.lost.pop(channel, None)
        if event is not None:
            event.set()

    def fail_next(self, method: str, status: int = 429, headers: dict[str, str] | None = None,
                  body: dict[str, Any] | None = None) -> None:
        """Make the next call of a method fail (e.g. 429 with Retry-After)."""
        body = body or {"ok": False, "error": "ratelimited"}
        self.failures.setdefault(method, []).append((status, headers or {"Retry-After": "0"}, body))

    async def wait_for(self, predicate: Callable[[], Any], timeout: float = PATIENCE_S) -> Any:
        """Wait until predicate() is truthy (re-checked on every recorded call); return it."""
        async def _wait() -> Any:
            async with self._cond:
                while True:
                    value = predicate()
                    if value:
                        return value
                    await self._cond.wait()

        return await asyncio.wait_for(_wait(), timeout)

    async def wait_call(self, method: str, where: Callable[[Call], bool] = lambda c: True,
                        count: int = 1, timeout: float = PATIENCE_S) -> list[Call]:
        """Wait until `count` calls of a method match; return the matching calls."""
        def enough() -> list[Call] | None:
            hits = [c for c in self.of(method) if where(c)]
            return hits if len(hits) >= count else None

        return await self.wait_for(enough, timeout)

    async def _record(self, call: Call) -> None:
        async with self._cond:
            self.calls.append(call)
            self._cond.notify_all()

    # ------------------------------------------------------------------ Web API
    @staticmethod
    async def _params(request: web.Request) -> dict[str, Any]:
        params: dict[str, Any] = dict(request.query)
        if request.content_type == "application/json":
            raw = await request.read()
            if raw:
                params.update(json.loads(raw))
            return params
        if request.can_read_body:
            form = await request.post()
            for k, v in form.items():
                text = v if isinstance(v, str) else v.file.read().decode()  # type: ignore[union-attr]
                if k in JSON_PARAMS and text[:1] in "[{":
                    params[k] = json.loads(text)
                else:
                    params[k] = text
        return params

    async def _api(self, request: web.Request) -> web.Response:
        method = request.match_info["method"]
        params = await self._params(request)
        auth = request.headers.get("Authorization", "")
        token = auth.removeprefix("Bearer ") or str(params.get("token", ""))
        return await self._for_token(token)._answer(request, method, params, token)

    async def _answer(self, request: web.Request, method: str, params: dict[str, Any],
                      token: str) -> web.Response:
        """Answer one Web API call in this workspace."""
        call = Call(method, params, token, dict(request.headers), at=self.clock())
        await self._record(call)
        unauthed = self._unauthed(token)
        if unauthed:  # Slack answers these with HTTP 200
            call.ok = False
            return web.json_response({"ok": False, "error": unauthed})
        mended = self.lost.get(str(params.get("channel", "")))
        if mended is not None:  # the request never reaches Slack: it hangs, then fails
            call.ok = False
            await mended.wait()
            return web.Response(status=503)
        needed = NEEDS_SCOPE.get(method)
        if self.scopes is not None and needed and needed not in self.scopes:
            call.ok = False
            return web.json_response({"ok": False, "error": "missing_scope", "needed": needed,
                                      "provided": ",".join(sorted(self.scopes))},
                                     headers={"x-oauth-scopes": ",".join(sorted(self.scopes))})
        if self.enforce_limits and method in ("chat.postMessage", "chat.update", "pins.add",
                                              "pins.remove"):
            wait = self._over_limit(method, str(params.get("channel", "")))
            if wait:
                self.too_many += 1
                call.ok = False
                return web.json_response({"ok": False, "error": "ratelimited"}, status=429,
                                         headers={"Retry-After": str(wait)})
        pending = self.failures.get(method)
        if pending:
            status, headers, body = pending.pop(0)
            call.ok = bool(body.get("ok")) and status < 400
            return web.json_response(body, status=status, headers=headers)
        handler = getattr(self, "_m_" + method.replace(".", "_"), None)
        if handler is None:
            return web.json_response({"ok": False, "error": "unknown_method"})
        return web.json_response(handler(params))

    def _over_limit(self, method: str, channel: str) -> int:
        """0 and the call counted, or whole seconds to wait (a limit would break)."""
        now = self.clock()
        key, count, per = ((f"post:{channel}", 1, 0.9) if method == "chat.postMessage"
                           else (method, 20, 57.0) if method.startswith("pins.")  # Tier 2
                           else ("update", 50, 57.0))  # chat.update, Tier 3
        times = [t for t in self._sent_at.get(key, []) if t > now - per]
        self._sent_at[key] = times
        if len(times) >= count:
            return max(1, int(times[len(times) - count] + per - now + 0.999))
        times.append(now)
        return 0

    def _m_auth_test(self, p: dict[str, Any]) -> dict[str, Any]:
        # As Slack answers: enterprise_id only in an Enterprise Grid, is_enterprise_install
        # true for an org-wide install (whose requests come from any workspace of the org).
        out = {"ok": True, "url": "https://fake.slack.test/", "team": "Fake",
               "user": "matchday", "team_id": self.team_id, "user_id": self.bot_user,
               "bot_id": "B0BOT", "is_enterprise_install": self.enterprise_install}
        if self.enterprise_id:
            out["enterprise_id"] = self.enterprise_id
        return out

    def _new_ts(self) -> str:
        # Like Slack's: the posting time (epoch seconds), unique by its fraction.
        return f"{int(time.time())}.{next(self._ts):06d}"

    def _m_chat_postMessage(self, p: dict[str, Any]) -> dict[str, Any]:
        channel = str(p.get("channel", ""))
        if not channel:
            return {"ok": False, "error": "channel_not_found"}
        if channel.startswith("U"):  # a user id: Slack posts in the app's DM with them
            channel = "D" + channel[1:]
        ts = self._new_ts()
        self.messages[(channel, ts)] = dict(p)
        return {"ok": True, "channel": channel, "ts": ts,
                "message": {"text": p.get("text", ""), "ts": ts, "bot_id": "B0BOT"}}

    def _history(self, channel: str, p: dict[str, Any], keep: Callable[[dict[str, Any]], bool]
                 ) -> dict[str, Any]:
        """Messages of a channel newer than `oldest`, newest first, metadata only when asked
        (include_all_metadata), as conversations.history / .replies answer."""
        if channel.startswith("U"):
            return {"ok": False, "error": "channel_not_found"}
        oldest = float(p.get("oldest") or 0)
        meta = str(p.get("include_all_metadata", "")).lower() in ("1", "true")
        rows = []
        for (ch, ts), params in self.messages.items():
            if ch != channel or float(ts) <= oldest or not keep(params):
                continue
            msg: dict[str, Any] = {"type": "message", "ts": ts, "text": params.get("text", ""),
                                   "bot_id": "B0BOT"}
            if meta and params.get("metadata"):
                raw = params["metadata"]
                msg["metadata"] = json.loads(raw) if isinstance(raw, str) else raw
            rows.append(msg)
        rows.sort(key=lambda m: float(m["ts"]), reverse=True)
        limit = int(p.get("limit") or 100)
        return {"ok": True, "messages": rows[:limit], "has_more": len(rows) > limit}

    def _m_conversations_history(self, p: dict[str, Any]) -> dict[str, Any]:
        return self._history(str(p.get("channel", "")), p, lambda m: not m.get("thread_ts"))

    def _m_conversations_replies(self, p: dict[str, Any]) -> dict[str, Any]:
        ts = str(p.get("ts", ""))
        return self._history(str(p.get("channel", "")), p,
                             lambda m: str(m.get("thread_ts") or "") == ts)

    def _m_chat_update(self, p: dict[str, Any]) -> dict[str, Any]:
        key = (str(p.get("channel", "")), str(p.get("ts", "")))
        if key not in self.messages:
            return {"ok": False, "error": "message_not_found"}
        self.messages[key] = {**self.messages[key], **p}
        return {"ok": True, "channel": key[0], "ts": key[1], "text": p.get("text", "")}

    def _m_pins_add(self, p: dict[str, Any]) -> dict[str, Any]:
        channel, ts = str(p.get("channel", "")), str(p.get("timestamp", ""))
        if (channel, ts) not in self.messages:
            return {"ok": False, "error": "message_not_found"}
        pins = self.pins.setdefault(channel, [])
        if ts in pins:
            return {"ok": False, "error": "already_pinned"}
        pins.append(ts)
        return {"ok": True}

    def _m_pins_remove(self, p: dict[str, Any]) -> dict[str, Any]:
        channel, ts = str(p.get("channel", "")), str(p.get("timestamp", ""))
        if ts not in self.pins.get(channel, []):
            return {"ok": False, "error": "no_pin"}
        self.pins[channel].remove(ts)
        return {"ok": True}

    def _m_chat_postEphemeral(self, p: dict[str, Any]) -> dict[str, Any]:
        return {"ok": True, "message_ts": self._new_ts()}

    def _view(self, p: dict[str, Any]) -> dict[str, Any]:
        view = p.get("view")
        if isinstance(view, str):
            view = json.loads(view)
        n = next(self._ids)
        return {"ok": True, "view": {**(view or {}), "id": f"V{n:08d}", "hash": f"h{n}"}}

    def _m_views_open(self, p: dict[str, Any]) -> dict[str, Any]:
        if not p.get("trigger_id"):
            return {"ok": False, "error": "invalid_trigger_id"}
        return self._view(p)

    def _m_views_publish(self, p: dict[str, Any]) -> dict[str, Any]:
        return self._view(p)

    def _m_views_update(self, p: dict[str, Any]) -> dict[str, Any]:
        return self._view(p)

    def _m_conversations_open(self, p: dict[str, Any]) -> dict[str, Any]:
        users = str(p.get("users", ""))
        return {"ok": True, "channel": {"id": "D" + users.lstrip("U")}}

    def _m_users_info(self, p: dict[str, Any]) -> dict[str, Any]:
        return {"ok": True, "user": {"id": p.get("user"), "name": "someone",
                                     "real_name": "Some One"}}

    def _m_files_getUploadURLExternal(self, p: dict[str, Any]) -> dict[str, Any]:
        file_id = f"F{next(self._ids):08d}"
        return {"ok": True, "upload_url": f"{self.base}/upload/{file_id}", "file_id": file_id}

    def _m_files_completeUploadExternal(self, p: dict[str, Any]) -> dict[str, Any]:
        files = p.get("files") or []
        if isinstance(files, str):  # form-encoded calls send it as a JSON string
            files = json.loads(files)
        return {"ok": True, "files": [{"id": f.get("id"), "title": f.get("title", "")}
                                      for f in files]}

    def _m_apps_connections_open(self, p: dict[str, Any]) -> dict[str, Any]:
        return {"ok": True, "url": f"{self.base.replace('http', 'ws', 1)}/socket"}

    # ------------------------------------------------------------------ uploads, response_url
    async def _upload(self, request: web.Request) -> web.Response:
        file_id = request.match_info["file_id"]
        data = await request.read()
        self.uploads[file_id] = data
        await self._record(Call("upload", {"file_id": file_id, "size": len(data)}))
        return web.Response(text="OK - " + str(len(data)))

    async def _respond(self, request: web.Request) -> web.Response:
        params = await self._params(request)
        params["key"] = request.match_info["key"]
        call = Call("respond", params)
        await self._record(call)
        if self.respond_429:  # e.g. a burst of answers: Slack says "slow down"
            self.respond_429 -= 1
            call.ok = False
            return web.Response(status=429, text="rate_limited", headers={"Retry-After": "1"})
        return web.Response(text="ok")

    # ------------------------------------------------------------------ Socket Mode
    async def _socket(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse(autoping=True)
        await ws.prepare(request)
        self._ws = ws
        await self._record(Call("ws.connect", {}))
        await ws.send_json({"type": "hello", "num_connections": 1,
                            "debug_info": {"host": "fake"}, "connection_info": {"app_id": "A0"}})
        async for msg in ws:
            if msg.type == WSMsgType.TEXT:
                data = json.loads(msg.data)
                if "envelope_id" in data:
                    self.acks[data["envelope_id"]] = data
                await self._record(Call("ws.ack", data))
            elif msg.type in (WSMsgType.ERROR, WSMsgType.CLOSE):
                break
        return ws

    async def connected(self, timeout: float = PATIENCE_S) -> None:
        """Wait until a Socket Mode client has connected."""
        await self.wait_call("ws.connect", timeout=timeout)

    async def send_envelope(self, type_: str, payload: dict[str, Any],
                            accepts_response_payload: bool = False) -> str:
        """Push an envelope (events_api, slash_commands, interactive) to the client."""
        if self._ws is None:
            raise RuntimeError("no Socket Mode client connected")
        envelope_id = f"env-{next(self._ids)}"
        await self._ws.send_json({"envelope_id": envelope_id, "type": type_, "payload": payload,
                                  "accepts_response_payload": accepts_response_payload,
                                  "retry_attempt": 0, "retry_reason": ""})
        return envelope_id

    async def ack_of(self, envelope_id: str, timeout: float = PATIENCE_S) -> dict[str, Any]:
        """Wait for the client's ack of an envelope."""
        return await self.wait_for(lambda: self.acks.get(envelope_id), timeout)


# ---------------------------------------------------------------------- signed requests
SIGNING_SECRET = "test-signing-secret"
TEAM = "T0TEAM"
# The fake serves response_urls on this host: tests allow it like Slack's own hosts.
RESPONSE_HOSTS = "127.0.0.1"


def signed_headers(body: str, *, secret: str = SIGNING_SECRET, timestamp: int | None = None,
                   content_type: str = "application/x-www-form-urlencoded",
                   retry_num: int | None = None) -> dict[str, str]:
    """Headers Slack would send: timestamp and v0 signature (slack-sdk's SignatureVerifier)."""
    from slack_sdk.signature import SignatureVerifier

    ts = str(int(time.time()) if timestamp is None else timestamp)
    sig = SignatureVerifier(secret).generate_signature(timestamp=ts, body=body)
    headers = {"Content-Type": content_type, "X-Slack-Request-Timestamp": ts,
               "X-Slack-Signature": sig}
    if retry_num is not None:
        headers["X-Slack-Retry-Num"] = str(retry_num)
        headers["X-Slack-Retry-Reason"] = "http_timeout"
    return headers


def bolt_request(body: str, **kw: Any) -> Any:
    """A signed AsyncBoltRequest for AsyncApp.async_dispatch."""
    from slack_bolt.request.async_request import AsyncBoltRequest

    content_type = kw.get("content_type", "application/x-www-form-urlencoded")
    headers = signed_headers(body, **kw)
    headers["Content-Type"] = content_type
    return AsyncBoltRequest(body=body, headers={k.lower(): [v] for k, v in headers.items()})


def slash_body(command: str, text: str, *, user: str, channel: str, trigger: str,
               response_url: str, channel_name: str = "control", team: str = TEAM) -> str:
    """A slash command's form body."""
    return urlencode({"token": "legacy", "team_id": team, "team_domain": "fake",
                      "channel_id": channel, "channel_name": channel_name, "user_id": user,
                      "user_name": user.lower(), "command": command, "text": text,
                      "api_app_id": "A0APP", "response_url": response_url,
                      "trigger_id": trigger})


def slash_payload(command: str, text: str, **kw: str) -> dict[str, str]:
    """The same slash command as a Socket Mode payload (a dict)."""
    return dict(parse_qsl(slash_body(command, text, **kw), keep_blank_values=True))


def interactive_body(payload: dict[str, Any]) -> str:
    """An interactivity request's form body: payload=<json>."""
    return urlencode({"payload": json.dumps(payload)})


def button_payload(*, user: str, channel: str, message_ts: str, value: str, trigger: str,
                   response_url: str, action_id: str = "cmd_0") -> dict[str, Any]:
    """block_actions for a button press on a bot message in a channel."""
    return {"type": "block_actions", "team": {"id": TEAM}, "api_app_id": "A0APP",
            "user": {"id": user, "username": user.lower(), "team_id": TEAM},
            "trigger_id": trigger, "response_url": response_url,
            "container": {"type": "message", "message_ts": message_ts, "channel_id": channel,
                          "is_ephemeral": False},
            "channel": {"id": channel, "name": "control"},
            "message": {"ts": message_ts, "type": "message"},
            "actions": [{"type": "button", "action_id": action_id, "block_id": "b",
                         "value": value, "action_ts": f"{time.time():.6f}",
                         "text": {"type": "plain_text", "text": "x"}}]}


def submission_payload(view: dict[str, Any], state: dict[str, Any], *, user: str) -> dict[str, Any]:
    """view_submission of a modal the bot opened, with the given field values.

    state: block_id -> str (text/number) or ("select", value)."""
    values: dict[str, Any] = {}
    for block_id, v in state.items():
        if isinstance(v, tuple):
            values[block_id] = {"v": {"type": "static_select",
                                      "selected_option": {"value": v[1]}}}
        else:
            values[block_id] = {"v": {"type": "plain_text_input", "value": v}}
    return {"type": "view_submission", "team": {"id": TEAM}, "api_app_id": "A0APP",
            "user": {"id": user, "username": user.lower(), "team_id": TEAM},
            "trigger_id": "trig-view",
            "view": {**view, "state": {"values": values}, "team_id": TEAM}}


def event_body(event: dict[str, Any], event_id: str, *, team: str = TEAM,
               bot_user: str = "U0BOT") -> str:
    """An Events API callback (JSON body)."""
    return json.dumps({"token": "legacy", "team_id": team, "api_app_id": "A0APP",
                       "type": "event_callback", "event_id": event_id,
                       "event_time": int(time.time()), "event": event,
                       "authorizations": [{"team_id": team, "user_id": bot_user,
                                           "is_bot": True}]})
