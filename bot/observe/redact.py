"""Secrets out of every log line, error and traceback: one redactor, fed from Settings at
start-up (tokens, signing and webhook secrets, Redis passwords) and by add_secret() later.

Installed by configure_logging in two places on purpose: a log record factory, so a record
is clean from the moment it is made, whichever logger or handler (added later, by a library)
emits it; and a filter on each root handler, for records made without the factory
(logging.makeLogRecord, or a factory someone else sets afterwards)."""

from __future__ import annotations

import logging
import sys
import threading
import traceback
from collections.abc import Iterable
from types import TracebackType
from typing import Any
from urllib.parse import parse_qs, quote, unquote, urlsplit

MASK = "***"
# Shorter values would mask ordinary text everywhere; a secret that short is guessable anyway.
MIN_LENGTH = 4


class Redactor:
    """Replaces every known secret (as typed and percent-encoded) with ***."""

    def __init__(self) -> None:
        self._secrets: set[str] = set()
        self._ordered: tuple[str, ...] = ()  # longest first: one inside another goes whole
        self._lock = threading.Lock()

    def add(self, value: Any) -> None:
        """Mask this value from now on (a SecretStr, a str; None and '' are ignored)."""
        if value is None:
            return
        text = value.get_secret_value() if hasattr(value, "get_secret_value") else str(value)
        forms = {text, quote(text, safe=""), quote(text)}  # URLs carry them encoded
        with self._lock:
            self._secrets |= {f for f in forms if len(f) >= MIN_LENGTH}
            self._ordered = tuple(sorted(self._secrets, key=len, reverse=True))

    def clear(self) -> None:
        """Forget every secret (tests)."""
        with self._lock:
            self._secrets.clear()
            self._ordered = ()

    @property
    def empty(self) -> bool:
        """No secret is known yet."""
        return not self._ordered

    def __call__(self, text: str) -> str:
        """The text with every secret masked (plain replaces: linear, no regex to build)."""
        for secret in self._ordered if text else ():
            if secret in text:
                text = text.replace(secret, MASK)
        return text


REDACTOR = Redactor()


def add_secret(value: Any) -> None:
    """Mask this value in every log line, error and traceback from now on."""
    REDACTOR.add(value)


def redact(text: str) -> str:
    """The text with every configured secret masked (for lines printed outside logging)."""
    return REDACTOR(text)


def redis_passwords(url: str | None) -> list[str]:
    """The password(s) in a REDIS_URL, read as redis-py reads them (the credentials end at
    the last '@'; a `password=` query argument counts too), raw and decoded."""
    if not url:
        return []
    out: list[str] = []
    rest = url.partition("://")[2]
    auth = rest.split("?", 1)[0].rpartition("@")[0]
    if auth:
        password = auth.partition(":")[2]
        out += [password, unquote(password)]
    try:
        query = parse_qs(urlsplit(url).query)
    except ValueError:
        query = {}
    out += query.get("password", [])
    return [p for p in out if p]


def settings_secrets(settings: Any) -> list[str]:
    """Every secret the settings hold, as strings."""
    values: list[str] = []
    for name in ("telegram_bot_token", "telegram_webhook_secret", "slack_bot_token",
                 "slack_app_token", "slack_signing_secret", "ingress_key", "admin_token"):
        secret = getattr(settings, name, None)
        if secret is not None and secret.get_secret_value():
            values.append(secret.get_secret_value())
    token = getattr(settings, "telegram_bot_token", None)
    if token is not None:  # the part after "<bot id>:" is the secret on its own
        values.append(token.get_secret_value().partition(":")[2])
    values += redis_passwords(getattr(settings, "redis_url", None))
    return [v for v in values if v]


def scrub(record: logging.LogRecord) -> logging.LogRecord:
    """Mask secrets in a record's message, arguments, traceback and stack, in place (the
    message is formatted then, the traceback rendered to text)."""
    if REDACTOR.empty:  # nothing to hide: leave the record as logging made it
        return record
    try:
        message = record.getMessage()
    except Exception:  # bad %-args: keep what there is, masked
        message = f"{record.msg} {record.args!r}"
    record.msg, record.args = REDACTOR(str(message)), None
    if record.exc_info and not record.exc_text:
        record.exc_text = "".join(traceback.format_exception(*record.exc_info)).rstrip("\n")
    if record.exc_text:
        record.exc_text = REDACTOR(record.exc_text)
        record.exc_info = None  # no formatter can format the raw exception again
    if record.stack_info:
        record.stack_info = REDACTOR(record.stack_info)
    return record


class RedactingFilter(logging.Filter):
    """A handler filter that masks secrets (it never drops a record)."""

    def filter(self, record: logging.LogRecord) -> bool:
        """Scrub the record; always keep it."""
        scrub(record)
        return True


_installed: dict[str, Any] = {}


def install(secrets: Iterable[Any] = ()) -> None:
    """Add these secrets and hook the redactor into logging and uncaught exceptions (once)."""
    for value in secrets:
        add_secret(value)
    if not _installed:
        previous = logging.getLogRecordFactory()

        def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
            return scrub(previous(*args, **kwargs))

        def excepthook(kind: type[BaseException], exc: BaseException,
                       tb: TracebackType | None) -> None:
            sys.stderr.write(REDACTOR("".join(traceback.format_exception(kind, exc, tb))))

        _installed.update(factory=previous, excepthook=sys.excepthook)
        logging.setLogRecordFactory(factory)
        sys.excepthook = excepthook
    for handler in logging.getLogger().handlers:
        if not any(isinstance(f, RedactingFilter) for f in handler.filters):
            handler.addFilter(RedactingFilter())


def uninstall() -> None:
    """Undo install() and forget the secrets (tests)."""
    if _installed:
        logging.setLogRecordFactory(_installed["factory"])
        sys.excepthook = _installed["excepthook"]
        _installed.clear()
    for handler in logging.getLogger().handlers:
        for f in [f for f in handler.filters if isinstance(f, RedactingFilter)]:
            handler.removeFilter(f)
    REDACTOR.clear()
