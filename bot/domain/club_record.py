"""A club as a tenant of one deployment: its id, name, grounds, retention, whether it is
enabled, and where each of its platform secrets lives (a reference, never the secret)."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

CLUB_ID = re.compile(r"^[a-z0-9][a-z0-9-]{1,30}$")
ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")
GROUND_ID = re.compile(r"^[a-z0-9][a-z0-9_-]{0,40}$")
RETENTION_DAYS = (1, 3650)  # a day to ten years
DEFAULT_RETENTION_DAYS = 365
# The four secrets a club's bots need: field name -> what the operator calls it.
SECRET_FIELDS = {
    "telegram_token": "Telegram bot token",
    "telegram_secret": "Telegram webhook secret",
    "slack_token": "Slack bot token",
    "slack_signing_secret": "Slack signing secret",
}
REF_HINT = "give a reference: env:VAR_NAME or file:/absolute/path"


class ClubError(Exception):
    """A club or a secret reference is wrong; the message is one line for the operator."""


@dataclass(frozen=True)
class SecretRef:
    """Where a secret lives (`env:VAR_NAME` or `file:/path`); never the secret itself."""

    kind: str  # "env" or "file"
    where: str  # the variable's name or the file's path

    @classmethod
    def parse(cls, text: str) -> SecretRef:
        """A reference from its text form; ClubError (not naming the text) when it is none."""
        kind, sep, where = text.partition(":")
        if sep and kind == "env" and ENV_NAME.fullmatch(where):
            return cls("env", where)
        if sep and kind == "file" and where.startswith("/") and "\n" not in where:
            return cls("file", where)
        raise ClubError(f"not a secret reference (the value is not shown): {REF_HINT}")

    def __str__(self) -> str:
        return f"{self.kind}:{self.where}"

    def resolve(self, env: Mapping[str, str]) -> str:
        """The secret the reference names (env from `env`); ClubError naming the ref when
        it is missing, empty or unreadable."""
        if self.kind == "env":
            value = env.get(self.where, "")
            if not value:
                raise ClubError(f"{self} is missing (the variable is not set)")
            return value
        try:
            value = Path(self.where).read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError) as exc:
            raise ClubError(f"{self} is missing ({exc.__class__.__name__})") from None
        if not value:
            raise ClubError(f"{self} is missing (the file is empty)")
        return value

    def resolves(self, env: Mapping[str, str]) -> bool:
        """Whether `resolve` finds the secret."""
        try:
            self.resolve(env)
        except ClubError:
            return False
        return True


@dataclass(frozen=True)
class Club:
    """One club of the deployment (evidence-grade: disabled, never deleted)."""

    club_id: str
    name: str
    enabled: bool
    telegram_token: SecretRef
    telegram_secret: SecretRef
    slack_token: SecretRef
    slack_signing_secret: SecretRef
    grounds: tuple[str, ...] = ()
    retention_days: int = DEFAULT_RETENTION_DAYS

    def secrets(self) -> dict[str, SecretRef]:
        """Field name -> the reference of each of the club's secrets."""
        return {f: getattr(self, f) for f in SECRET_FIELDS}

    def to_fields(self) -> dict[str, str]:
        """The club as flat string fields (for storage)."""
        return {"club_id": self.club_id, "name": self.name, "enabled": "1" if self.enabled
                else "0", **{f: str(r) for f, r in self.secrets().items()},
                "grounds": json.dumps(list(self.grounds)),
                "retention_days": str(self.retention_days)}

    @classmethod
    def from_fields(cls, fields: Mapping[str, str]) -> Club:
        """The club stored as `to_fields` wrote it."""
        return cls(fields["club_id"], fields["name"], fields.get("enabled") == "1",
                   *(SecretRef.parse(fields[f]) for f in SECRET_FIELDS),
                   grounds=tuple(json.loads(fields.get("grounds") or "[]")),
                   retention_days=int(fields.get("retention_days")
                                      or DEFAULT_RETENTION_DAYS))


def parse_club_id(text: str) -> str:
    """A club id (a slug: a-z, 0-9, hyphens, 2-31 characters); ClubError otherwise."""
    if not CLUB_ID.fullmatch(text):
        raise ClubError(f"{text[:40]!r} is not a club id: 2-31 characters a-z, 0-9 and -, "
                        "starting with a letter or digit (e.g. west-ham)")
    return text


def parse_name(text: str) -> str:
    """A club's display name: one line, 1-80 characters; ClubError otherwise."""
    name = " ".join(text.split())
    if not name or len(name) > 80:
        raise ClubError("--name takes the club's name: 1-80 characters on one line")
    return name


def parse_grounds(names: list[str]) -> tuple[str, ...]:
    """Ground ids (as in config/grounds), each once, in order; ClubError on a bad one."""
    for g in names:
        if not GROUND_ID.fullmatch(g):
            raise ClubError(f"{g[:40]!r} is not a ground id (e.g. london_stadium)")
    return tuple(dict.fromkeys(names))


def parse_retention(days: int) -> int:
    """Days a club's records are kept (1-3650); ClubError otherwise."""
    low, high = RETENTION_DAYS
    if not low <= days <= high:
        raise ClubError(f"--retention-days takes {low} to {high} days, not {days}")
    return days


def parse_ref(option: str, text: str) -> SecretRef:
    """A secret reference given to `option`; ClubError with a hint (never the value)."""
    try:
        return SecretRef.parse(text)
    except ClubError:
        raise ClubError(f"{option} takes where the secret lives, never the secret itself: "
                        f"{REF_HINT} (the value given is not shown)") from None
