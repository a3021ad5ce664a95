"""What every part of the store shares: the key schema, the write result and the errors."""

from __future__ import annotations

import json
import re
from contextvars import ContextVar
from dataclasses import dataclass, field

from bot.domain.incident.incident_model import Incident
from bot.domain.ledger import Text, Var
from bot.domain.outcomes import Reason

LIVE_TTL_S = 86400  # a live location is kept a day after its last position
SEV_BAND = 10**11  # open-incident score = (5 - severity) * band + reported epoch seconds


class StoreUnavailable(Exception):
    """Redis did not answer. Whether a write sent before it stopped ran is not known: see
    `WriteAttempts`."""


class WritesRefused(StoreUnavailable):
    """Redis answered, but a slot's master refused the write (NOREPLICAS: no replica left to
    confirm it under `min-replicas-to-write`): nothing was written there, reads and other
    slots go on. Not "Redis down"."""


@dataclass
class WriteAttempts:
    """Whether the current command has sent a write to Redis (then an outage leaves its
    outcome unknown: the script may have run before the reply was lost)."""

    attempted: bool = False
    outage: bool = False  # the store stopped answering during the command
    unconfirmed: bool = False  # the sender was told the outcome is unknown
    # A write is on its way out on a client whose connections report each send
    # (note_sent): then `attempted` means bytes left, not just that sending began.
    writing: bool = False


_attempts: ContextVar[WriteAttempts | None] = ContextVar("matchday_writes", default=None)


def track_writes() -> WriteAttempts:
    """Start recording write attempts for the current command (and tasks it starts)."""
    attempts = WriteAttempts()
    _attempts.set(attempts)
    return attempts


def note_outage() -> None:
    """The store stopped answering during the current command."""
    attempts = _attempts.get()
    if attempts is not None:
        attempts.outage = True


def note_not_run() -> None:
    """The server refused the write with an error reply (READONLY, NOREPLICAS, CLUSTERDOWN…):
    it did not run, so the outcome is known after all."""
    attempts = _attempts.get()
    if attempts is not None:
        attempts.attempted = False


def note_write(sends_reported: bool = False) -> None:
    """A write is about to be sent. With `sends_reported`, the connection marks it
    attempted only once bytes leave (note_sent): a refused connection sent nothing."""
    attempts = _attempts.get()
    if attempts is not None:
        if sends_reported:
            attempts.writing = True
        else:
            attempts.attempted = True


def note_write_done() -> None:
    """The write's round trip is over (answered or failed)."""
    attempts = _attempts.get()
    if attempts is not None:
        attempts.writing = False


def writing() -> bool:
    """Whether the current command is sending a write now (see note_write)."""
    attempts = _attempts.get()
    return attempts is not None and attempts.writing


def note_sent() -> None:
    """A connection is about to put a command on the wire (during a write: attempted)."""
    attempts = _attempts.get()
    if attempts is not None and attempts.writing:
        attempts.attempted = True


class Refused(Exception):
    """A guard in the write refused the command: nothing was written. A reason from a
    closed set, what it is about (`subject`: a fixture id, an incident number) and, where
    the guard read it, the value it found (`current`); the words are the caller's."""

    def __init__(self, reason: Reason, subject: str = "", current: str = "") -> None:
        super().__init__(reason.value, subject, current)
        self.reason = reason
        self.subject = subject
        self.current = current

    @classmethod
    def from_script(cls, raw: str) -> Refused:
        """The refusal a guard returned (see `guard`)."""
        code, _, rest = raw.partition("|")
        subject, _, current = rest.partition("|")
        return cls(Reason(code), subject, current)


def guard(reason: Reason, subject: object = "", current: Var | None = None) -> Text:
    """What a guard op returns when it refuses: the reason's code, the subject and (a Var
    the guard reads, e.g. the status it found) the current value, for Refused.from_script."""
    head = f"{reason.value}|{subject}|"
    return head + current if current is not None else head


@dataclass(frozen=True)
class KeySpace:
    """The club a store serves: every key it builds carries the club inside its hash tag, so
    clubs spread across Cluster slots. KeySpace() (no club) is the single-club deployment,
    whose keys are exactly those it always had."""

    club: str = ""

    def __post_init__(self) -> None:
        # a club id is spliced into hash tags and SCAN patterns: no braces, globs or '/'
        if self.club and not _CLUB_ID.fullmatch(self.club):
            raise ValueError(f"club id {self.club!r}: letters, digits, '-', '_', '.' only")


_CLUB_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
NO_CLUB = KeySpace()


def tag_prefix(tag: str, space: KeySpace = NO_CLUB) -> str:
    """Key prefix of one hash tag in a key space: `md:{<tag>}:`, or `md:{<club>/<tag>}:`
    for a club. Every key prefix is made here."""
    return f"md:{{{space.club}/{tag}}}:" if space.club else f"md:{{{tag}}}:"


def ops_prefix(space: KeySpace = NO_CLUB) -> str:
    """Key prefix of a key space's shared keys (members, invites, fixture choices, audit,
    leases of singleton duties). Nothing a chat's or a fixture's delivery needs lives here:
    per-chat keys carry the chat's own tag (chat_prefix) and per-fixture keys the fixture's,
    so a Cluster slot that stops taking writes stops only what lives in it."""
    return tag_prefix("ops", space)


# The single-club deployment's shared prefix (tests and tools; the store asks ops_prefix).
OPS = ops_prefix()


def fx_prefix(fixture_id: str, space: KeySpace = NO_CLUB) -> str:
    """Key prefix of one fixture (its hash tag)."""
    return tag_prefix(fixture_id, space)


def deployment_prefix() -> str:
    """Key prefix of the deployment's own registry (the clubs it serves and their audit
    trail): one hash tag, so its writes are one slot's on a Cluster."""
    return "md:{deployment}:"


# The deployment registry's keys, relative to deployment_prefix(): the set of club ids, the
# registry's append-only audit stream, and a hash per club.
CLUB_IDS = "clubs"
CLUB_AUDIT = "clubs:audit"


def club_key(club_id: str) -> str:
    """A club's hash, relative to deployment_prefix()."""
    return f"club:{club_id}"


def chat_prefix(platform: str, chat: str, space: KeySpace = NO_CLUB) -> str:
    """Key prefix of one chat's own keys (its hash tag): rate-limit windows, the reverse
    index of the bot's messages there."""
    return tag_prefix(f"chat:{platform}:{chat}", space)


def bot_prefix(platform: str, bot_id: str, space: KeySpace = NO_CLUB) -> str:
    """Key prefix of one bot's own keys (its hash tag): the Telegram inbox, its offset and
    its polling lease."""
    return tag_prefix(f"{'tg' if platform == 'telegram' else platform}:{bot_id}", space)


def platform_prefix(platform: str, space: KeySpace = NO_CLUB) -> str:
    """Key prefix of a platform's shared rate-limit keys (its bot-wide windows)."""
    return tag_prefix(f"rl:{platform}", space)


def as_hash(flat: list[str]) -> dict[str, str]:
    """[f1, v1, f2, v2] -> {f1: v1, f2: v2}."""
    return dict(zip(flat[::2], flat[1::2], strict=True))


@dataclass
class Applied:
    """What a write returned: variables it set (e.g. the new incident number) and hashes."""

    duplicate: bool
    vars: dict[str, str] = field(default_factory=dict)
    hashes: list[dict[str, str]] = field(default_factory=list)

    @property
    def incident(self) -> Incident:
        """The incident the write returned (its first returned hash)."""
        return Incident.from_hash(self.hashes[0])

    @property
    def joined(self) -> bool:
        """The report joined an open incident (the same one) instead of opening one."""
        return bool(self.vars.get("similar"))

    @property
    def n(self) -> int:
        """The incident (or record) number the write set or matched."""
        return int(self.vars.get("similar") or self.vars["n"])


def result_vars(raw: str) -> dict[str, str]:
    """The script's variables as JSON (an empty Lua table encodes as {})."""
    return json.loads(raw) if raw not in ("{}", "[]") else {}
