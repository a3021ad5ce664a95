"""Platform-neutral messages: what comes in (Command) and what goes out (Reply, Outbound)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime

from bot.domain.incident.incident_card import IncidentCard, LiveRef
from bot.domain.ledger import clean_text
from bot.domain.outcomes import Outcome

MEDIA_ICONS = {
    "photo": "📷 photo", "document": "📄 document", "voice": "🎤 voice note", "audio": "🎵 audio",
    "video": "🎥 video", "video_note": "📹 video message", "animation": "🎞 animation",
    "sticker": "🏷 sticker", "contact": "👤 contact", "location": "📍 location",
}

# The longest recording taken as evidence (a whole matchday's, with margin): a platform's
# message declaring more is not a recording of tonight, and is refused rather than shown.
MEDIA_MAX_S = 4 * 3600


def declared_seconds(value: object, per_second: int = 1) -> int:
    """A platform's declared duration (seconds, or `per_second` units of it) as whole
    seconds; -1, refused as out of range, for a value that is not a finite number."""
    try:
        seconds = float(value or 0) / per_second
    except (TypeError, ValueError):
        return -1
    return int(seconds) if math.isfinite(seconds) else -1


@dataclass(frozen=True)
class MediaFault:
    """An attachment whose metadata is out of range: refused, never stored or shown."""

    kind: str  # a MEDIA_ICONS key
    what: str  # "duration" (negative or over limit_s) or "place" (not a point on Earth)
    limit_s: int = 0


def _fault(a: Attachment) -> MediaFault | None:
    if not 0 <= a.duration <= MEDIA_MAX_S:
        return MediaFault(a.kind, "duration", MEDIA_MAX_S)
    if a.lat is None and a.lon is None:
        return None
    if a.lat is None or a.lon is None or not (math.isfinite(a.lat) and math.isfinite(a.lon)) \
            or not (-90 <= a.lat <= 90 and -180 <= a.lon <= 180):
        return MediaFault(a.kind, "place")
    return None


@dataclass(frozen=True)
class Attachment:
    """Evidence that came with a message: a platform file id (photo, voice note, video…),
    a contact, or a GPS point / venue."""

    kind: str  # a MEDIA_ICONS key
    file_id: str = ""
    caption: str = ""
    lat: float | None = None
    lon: float | None = None
    duration: int = 0  # seconds (voice, audio, video)
    mime_type: str = ""
    detail: str = ""  # file name, sticker emoji, venue title, contact phone
    platform: str = ""  # where file_id is valid ("telegram", "slack")
    live: str = ""  # a live location's key on its platform: later positions move it
    moved: bool = False  # a later position of that live location (not new evidence)

    def __post_init__(self) -> None:
        # what people typed, as valid Unicode from the moment it arrives (see Command)
        for name in ("caption", "detail"):
            object.__setattr__(self, name, clean_text(getattr(self, name)))
        # checked once, here, where every platform's attachment is made (not a field: it
        # is never stored, and an attachment read back is checked again)
        object.__setattr__(self, "_fault", _fault(self))

    @property
    def fault(self) -> MediaFault | None:
        """What is out of range in its metadata (the core refuses it), or None."""
        fault: MediaFault | None = self.__dict__["_fault"]
        return fault

    def describe(self) -> str:
        """One line saying what it is, e.g. '🎤 voice note 0:12' (out-of-range metadata is
        never shown)."""
        parts = [MEDIA_ICONS.get(self.kind, self.kind)]
        if self.duration and self.fault is None:
            parts.append(f"{self.duration // 60}:{self.duration % 60:02d}")
        if self.detail:
            parts.append(self.detail)
        if self.lat is not None and self.lon is not None and self.fault is None:
            parts.append(f"{self.lat:.5f},{self.lon:.5f}")
        return " ".join(parts)


@dataclass(frozen=True)
class Respond:
    """Where a Slack command's ephemeral answer goes: the command's response_url, and the
    person to message directly once Slack no longer takes it (expired or used up)."""

    user: str  # the platform's user id
    url: str


@dataclass(frozen=True)
class ReplyVia:
    """How the adapter lets the core queue the sender's answer durably: a new message (both
    ids empty), quoting the sender's message, or replacing a bot message (a guided form's
    prompt). Made by the adapter from the platform's ids; the core never parses it."""

    quote: str = ""  # platform message id the answer quotes
    edit: str = ""  # platform message id the answer replaces in place
    respond: Respond | None = None  # the command's own answer channel (Slack)


@dataclass(frozen=True)
class Command:
    """One inbound event, already translated from its platform."""

    platform: str  # "telegram", "slack", "console", "replay"
    chat: str
    user: str
    text: str  # the full text as typed, or a button's command text
    dedupe_key: str
    attachments: tuple[Attachment, ...] = ()
    user_name: str = ""
    reply_to: str = ""  # incident id the message replies to, when the platform knows it
    private: bool = True  # a direct chat with the bot (vs a group channel)
    at: datetime | None = None  # when the platform says it was sent
    # How the adapter lets the core queue the reply durably; None: the adapter sends it.
    reply_via: ReplyVia | None = None

    def __post_init__(self) -> None:
        # Every platform's message becomes a Command here: lone UTF-16 surrogates (JSON may
        # carry "\ud800", a console may read undecodable bytes as them) become U+FFFD, the
        # one change the bot makes to what people type; nothing later can fail to encode it.
        for name in ("text", "user_name"):
            object.__setattr__(self, name, clean_text(getattr(self, name)))

    @property
    def who(self) -> str:
        """The stable identity key of the sender: platform:user."""
        return f"{self.platform}:{self.user}"

    def answer_outbound(self, reply: Reply, fixture: str, about: int = 0) -> Outbound | None:
        """The answer to this command as an outbox message (None when the adapter sends it);
        `about`: the incident it is about, if any."""
        via = self.reply_via
        if via is None:
            return None
        return Outbound(f"user:{self.platform}:{self.chat}", reply, fixture=fixture,
                        quote=via.quote, edit=via.edit, respond=via.respond, about=about)


@dataclass(frozen=True)
class Button:
    """A button whose press is the same as typing `command`."""

    label: str
    command: str
    style: str = ""  # "primary", "danger" or ""


@dataclass
class Reply:
    """What the bot answers to the person who sent a command."""

    text: str
    title: str = ""
    buttons: list[list[Button]] = field(default_factory=list)
    images: list[bytes] = field(default_factory=list)
    ok: bool = True
    request_location: bool = False  # offer a "share my location" key where the platform can
    media: list[Attachment] = field(default_factory=list)  # evidence to show as itself
    field: str = ""  # for a refusal: the part of the command it is about (forms mark it)
    card: IncidentCard | None = None  # the incident this message shows, as facts
    # an acknowledgement (a typed "ok" to a procedure): where the platform has reactions it
    # is a reaction on the sender's message (the Outbound's `quote`), not a message; the
    # text is said only if the reaction is refused
    ack: bool = False

    def lines(self) -> list[str]:
        """Title and body as lines of plain text."""
        return ([self.title] if self.title else []) + self.text.splitlines()


@dataclass
class Outbound:
    """A message to an audience (control room, commanders, stewards) or to one person.

    `ref` names a live message (e.g. "INC-7") that adapters edit in place when it is sent again;
    `thread` puts a message under a live message (an update or evidence of INC-7).
    """

    audience: str  # "control", "command", "stewards", "police", or "user:<platform>:<id>"
    reply: Reply
    ref: str = ""
    fixture: str = ""
    thread: str = ""  # ref of the live message this one belongs under (Slack thread, TG reply)
    quote: str = ""  # platform message id this answers (a reply quoting the user's message)
    edit: str = ""  # platform message id to replace in place (a guided form's prompt)
    respond: Respond | None = None  # answered through the command's own channel (Slack)
    stored: bool = False  # already written to the durable outbox by the write that caused it
    live: LiveRef | None = None  # stored as a reference: rendered at send time from the record
    # the number of the incident this message is about (0: none), though not its live
    # message: a reply to the message is tied to that incident (a photo replying to
    # "Logged INC-7" is evidence for INC-7)
    about: int = 0
    # the procedure id of a life-safety message: it takes the lane (bot/delivery/lane.py),
    # goes ahead of anything else queued for its chat, and nothing else is sent meanwhile
    urgent: str = ""
    # the broadcast id of a direct message to one steward that is not its first reach
    # (a chaser, or the DM of someone the one-to-many post cannot reach): it takes at most
    # the chasers' share of a platform's bot-wide rate, so control's cards are never held
    chase: str = ""
    # the pin slot of a one-to-many post that stays on top once the platform took it (the
    # current procedure's instruction): it replaces the post pinned before in that slot
    pin: str = ""
    # the broadcast id whose targeted stewards a one-to-many post reaches: when the platform
    # takes it, its time is recorded as every member's reach (a direct message's is `chase`)
    reaches: str = ""


@dataclass
class Result:
    """A handler's answer: the reply to the sender plus messages to others."""

    reply: Reply
    outbound: list[Outbound] = field(default_factory=list)
    queued: bool = False  # the reply is already in the durable outbox: adapters don't send it
    toast_only: bool = False  # a button's answer that leaves the tapped message as it is
    outcome: Outcome | None = None  # what the command did, as a value (counted; its incident
    # ties the answer to it, see `incident`)

    @property
    def incident(self) -> int:
        """The number of the incident the command logged or added to (0: none)."""
        return self.outcome.n if self.outcome is not None else 0


def answer(text: str, *, title: str = "", ok: bool = True, **kw: object) -> Result:
    """Shorthand for a Result with only a reply."""
    return Result(Reply(text=text, title=title, ok=ok, **kw))  # type: ignore[arg-type]


def refuse(reason: str, usage: str = "", *, field: str = "") -> Result:
    """A one-line refusal with the usage line, for bad input; nothing was written."""
    text = reason if not usage else f"{reason}\nUsage: {usage}"
    return Result(Reply(text=text, ok=False, field=field))
