"""Every config file checked at start-up (and by `matchday check-config`): types, ranges and
references between files (roles, zones, audiences and their chats), one line per problem
naming the file, the key and what is wrong. A file that passes here is read without error
later, when the first report needs it, not only at start."""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable, Collection, Mapping
from pathlib import Path
from typing import Annotated, Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from bot.core.roles import RolesError, load_role_matrix
from bot.domain.briefing.briefing_cadence import OFFSET_RE
from bot.domain.club_record import SECRET_FIELDS, Club
from bot.domain.deployment import fixture_posts_of, load_posts, rollcall_offset
from bot.domain.early_warning import load_rules
from bot.domain.grounds import load_ground
from bot.domain.vocab import INCIDENT_TYPES, RISK_CATEGORIES, ROLES
from bot.publicprotection.protection_plan import PlanError, plan_of

Seconds = Annotated[int, Field(ge=0, le=7 * 24 * 3600)]
Minutes = Annotated[int, Field(ge=0, le=7 * 24 * 60)]
Count = Annotated[int, Field(ge=0, le=100)]
Names = list[str]
PLATFORMS = ("telegram", "slack", "console")
TELEGRAM_CHAT = re.compile(r"^-?\d{1,20}$")
SLACK_CHANNEL = re.compile(r"^[CGD][A-Z0-9]{2,}$")
SLACK_USER = re.compile(r"^[UW][A-Z0-9]{2,}$")


class Strict(BaseModel):
    """A TOML table: exact types (no "60" for 60) and no unknown keys (a typo is an error)."""

    model_config = ConfigDict(strict=True, extra="forbid")


class TierRow(Strict):
    after_s: Seconds
    to: Annotated[Names, Field(min_length=1)]
    methane: bool = False


class SeverityRow(Strict):
    tiers: list[TierRow] = []
    remind_after_s: Seconds = 0
    remind_every_s: Seconds = 0
    remind_to: Names = ["control"]


class MergeRow(Strict):
    window_s: Seconds = 600


class MissingRow(Strict):
    police_after_s: Annotated[int, Field(ge=60, le=4 * 3600)] = 900
    to: Annotated[Names, Field(min_length=1)] = ["police", "control"]


class ProceduresRow(Strict):
    to: Names = ["command", "police"]
class BroadcastRow(Strict):
    chase_after_s: Annotated[int, Field(ge=10, le=3600)] = 60


class EscalationFile(Strict):
    severity: dict[str, SeverityRow] = {}
    merge: MergeRow = MergeRow()
    missing: MissingRow = MissingRow()
    procedures: ProceduresRow = ProceduresRow()
    broadcast: BroadcastRow = BroadcastRow()


class BriefingAudiences(Strict):
    full: Names = ["command"]
    stewards: Names = ["stewards"]
    summary: Names = ["summary"]


class Timing(Strict):
    summary_delay_minutes: Minutes = 10
    on_time_tolerance_minutes: Minutes = 2
    late_cutoff_minutes: Minutes = 0
    summary_grace_hours: Annotated[int, Field(ge=0, le=7 * 24)] = 12


class Content(Strict):
    history_fixtures: Count = 5
    recent_at_ground: Count = 3
    intel_notes: Names = []
    contacts: str = ""


class BriefingsFile(Strict):
    timezone: str = ""
    cadence: dict[str, Names] = {}
    audiences: BriefingAudiences = BriefingAudiences()
    timing: Timing = Timing()
    content: Content = Content()


class AudienceRow(Strict):
    readers: Names = []
    telegram: list[str | int] = []
    slack: Names = []
    console: Names = []


class Scoped(Strict):
    audiences: dict[str, AudienceRow] = {}


class ChannelsFile(Strict):
    audiences: dict[str, AudienceRow] = {}
    grounds: dict[str, Scoped] = {}
    fixtures: dict[str, Scoped] = {}


class UserRow(Strict):
    platform: str
    id: str | int
    name: str = ""
    role: str
    zone: str = ""


class RosterFile(Strict):
    user: list[UserRow] = []


class RefDays(Strict):
    ref_days: Annotated[int, Field(ge=1, le=36500)] = 365


class RetentionFile(Strict):
    arrest: RefDays = RefDays()
    ban: RefDays = RefDays()


def _key(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top level)"


def _what(err: Any) -> str:
    if err["type"] == "extra_forbidden":
        return "unknown key"
    if err["type"] == "missing":
        return "missing"
    return f"{err['msg'][0].lower()}{err['msg'][1:]} (got {err['input']!r})"


class Checker:
    """Collects one line per problem across the config folder."""

    def __init__(self, config_dir: Path) -> None:
        self.dir = config_dir
        self.problems: list[str] = []
        self.files = 0

    def add(self, file: str, key: str, what: str) -> None:
        """Record one problem."""
        self.problems.append(f"{file}: {key}: {what}")

    def read(self, name: str, required: bool = False) -> dict[str, Any] | None:
        """A TOML file's data (None when missing or unreadable, which is recorded)."""
        path = self.dir / name
        if not path.exists():
            if required:
                self.add(name, "(file)", f"missing (looked in {self.dir})")
            return None
        self.files += 1
        try:
            return tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            self.add(name, "(file)", f"not valid TOML: {exc}")
            return None

    def model(self, name: str, data: dict[str, Any] | None, schema: type[Strict]) -> Any:
        """The file's data checked against its schema (None after recording its problems)."""
        if data is None:
            return None
        try:
            return schema.model_validate(data)
        except ValidationError as exc:
            for err in exc.errors():
                self.add(name, _key(err["loc"]), _what(err))
            return None


def check_config(config_dir: Path,
                 commands: Callable[[], dict[str, frozenset[str]]] | None = None
                 ) -> tuple[int, list[str]]:
    """(files read, problems): every config file under config_dir checked; `commands` gives
    the registered commands that roles.toml is checked against."""
    c = Checker(config_dir)
    zones = _grounds(c)
    channels = c.model("channels.toml", c.read("channels.toml"), ChannelsFile)
    audiences = _channels(c, channels, zones) if channels else None
    _escalation(c, audiences)
    _briefings(c, audiences)
    _roster(c, zones)
    _inspections(c, zones)
    retention = c.read("retention.toml")
    c.model("retention.toml", retention, RetentionFile)
    warnings = config_dir / "early_warning.toml"
    if warnings.exists():
        c.files += 1
        try:
            load_rules(warnings)
        except (ValueError, KeyError, TypeError) as exc:
            c.problems.append(str(exc))  # names the file itself
    roles = config_dir / "roles.toml"
    if roles.exists() and commands is not None:
        c.files += 1
        try:
            load_role_matrix(roles, commands())
        except RolesError as exc:
            c.problems.append(str(exc))
    return c.files, c.problems


def _grounds(c: Checker) -> dict[str, set[str]]:
    """ground id -> its zone ids (every ground file read, its problems recorded)."""
    out: dict[str, set[str]] = {}
    paths = sorted((c.dir / "grounds").glob("*.toml"))
    if not paths:
        c.add("grounds/", "(folder)", f"no ground layouts in {c.dir / 'grounds'}")
    for path in paths:
        name = f"grounds/{path.name}"
        data = c.read(name)
        if data is None:
            continue
        for key in ("id", "name"):
            if not isinstance(data.get(key), str) or not data.get(key):
                c.add(name, key, "missing (a text value is needed)")
        rows = data.get("zone", [])
        ids = [z.get("id") for z in rows if isinstance(z, dict)]
        for i, z in enumerate(rows):
            if not isinstance(z, dict) or not isinstance(z.get("id"), str) or not isinstance(
                    z.get("name"), str):
                c.add(name, f"zone[{i}]", "needs id and name (text)")
                continue
            for adj in z.get("adjacent", []):
                if adj not in ids:
                    c.add(name, f"zone[{i}].adjacent", f"{adj!r} is not a zone of this ground")
        try:
            ground = load_ground(c.dir / "grounds" / path.name)
        except (ValueError, KeyError, TypeError) as exc:
            c.add(name, "(file)", str(exc).removeprefix(f"{path.name}: "))
            continue
        out[ground.id] = set(ground.zones)
        try:  # the stewarding plan's posts (issue 24): each in a zone of this ground
            for post in load_posts(c.dir / "grounds" / path.name):
                if post.zone not in ground.zones:
                    c.add(name, f"post {post.id}", f"{post.zone!r} is not a zone of this ground")
        except (ValueError, KeyError, TypeError) as exc:
            c.add(name, "post", str(exc).removeprefix(f"{path.name}: "))
        try:  # a fixture's own posts ([fixtures."<id>"]: drop, change or add posts)
            for fx, posts in fixture_posts_of(data, path.name).items():
                for post in posts:
                    if post.zone not in ground.zones:
                        c.add(name, f"fixtures.{fx} post {post.id}",
                              f"{post.zone!r} is not a zone of this ground")
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            key, _, what = str(exc).removeprefix(f"{path.name} ").partition(": ")
            c.add(name, key if what else "fixtures", what or key)
        try:  # Martyn's Law: [martyns_law], [[procedure]] and [[measure]] (issue 36)
            plan_of(data, set(ground.zones))
        except PlanError as exc:
            key, _, what = str(exc).partition(": ")
            c.add(name, key, what or key)
        try:  # when the automatic roll call goes out: T-<n>m/h/d before kick-off, or "off"
            rollcall_offset(data.get("rollcall"))
        except ValueError as exc:
            c.add(name, "rollcall", str(exc))
    return out


def _chat_ids(c: Checker, where: str, row: AudienceRow) -> None:
    for i, chat in enumerate(row.telegram):
        if not TELEGRAM_CHAT.match(str(chat)):
            c.add("channels.toml", f"{where}.telegram[{i}]",
                  f"a Telegram chat id is a number, e.g. -1001234567890 (got {chat!r})")
    for i, chat in enumerate(row.slack):
        if not SLACK_CHANNEL.match(chat):
            c.add("channels.toml", f"{where}.slack[{i}]",
                  f"a Slack channel id looks like C0123ABCD (got {chat!r})")
    for i, role in enumerate(row.readers):
        if role not in ROLES.keys():
            c.add("channels.toml", f"{where}.readers[{i}]",
                  f"unknown role {role!r} (roles: {', '.join(ROLES.keys())})")


def _channels(c: Checker, ch: ChannelsFile, zones: dict[str, set[str]]) -> dict[str, bool]:
    """audience -> has a chat on some platform (top-level audiences)."""
    for aud, row in ch.audiences.items():
        _chat_ids(c, f"audiences.{aud}", row)
    for kind, sections in (("grounds", ch.grounds), ("fixtures", ch.fixtures)):
        for name, section in sections.items():
            if kind == "grounds" and name not in zones:
                c.add("channels.toml", f"grounds.{name}",
                      f"no ground {name!r} in grounds/ (grounds: {', '.join(sorted(zones))})")
            for aud, row in section.audiences.items():
                _chat_ids(c, f"{kind}.{name}.audiences.{aud}", row)
    return {aud: bool(row.telegram or row.slack or row.console)
            for aud, row in ch.audiences.items()}


def _audience_refs(c: Checker, file: str, key: str, names: list[str],
                   audiences: dict[str, bool] | None) -> None:
    if audiences is None:  # channels.toml missing or broken: reported on its own
        return
    for i, aud in enumerate(names):
        if aud not in audiences:
            c.add(file, f"{key}[{i}]", f"audience {aud!r} is not in channels.toml "
                  f"(audiences: {', '.join(audiences) or 'none'})")
        elif not audiences[aud]:
            c.add(file, f"{key}[{i}]", f"audience {aud!r} has no chats in channels.toml")


def _escalation(c: Checker, audiences: dict[str, bool] | None) -> None:
    f = "escalation.toml"
    esc = c.model(f, c.read(f), EscalationFile)
    if esc is None:
        return
    for sev, row in esc.severity.items():
        key = f"severity.{sev}"
        if sev not in ("1", "2", "3", "4", "5"):
            c.add(f, key, "severity must be 1 to 5")
        after = [t.after_s for t in row.tiers]
        if after != sorted(after):
            c.add(f, f"{key}.tiers", f"tiers must be in time order (after_s {after})")
        for i, tier in enumerate(row.tiers):
            _audience_refs(c, f, f"{key}.tiers[{i}].to", tier.to, audiences)
        _audience_refs(c, f, f"{key}.remind_to", row.remind_to, audiences)
    _audience_refs(c, f, "missing.to", esc.missing.to, audiences)
    _audience_refs(c, f, "procedures.to", esc.procedures.to, audiences)


def _briefings(c: Checker, audiences: dict[str, bool] | None) -> None:
    f = "briefings.toml"
    br = c.model(f, c.read(f), BriefingsFile)
    if br is None:
        return
    if br.timezone:
        try:
            ZoneInfo(br.timezone)
        except (ZoneInfoNotFoundError, ValueError):
            c.add(f, "timezone", f"unknown time zone {br.timezone!r} (e.g. Europe/London)")
    for cat, offsets in br.cadence.items():
        if cat not in RISK_CATEGORIES.keys():
            c.add(f, f"cadence.{cat}", "unknown risk category "
                  f"(categories: {', '.join(RISK_CATEGORIES.keys())})")
        for i, off in enumerate(offsets):
            if not OFFSET_RE.match(off.strip()):
                c.add(f, f"cadence.{cat}[{i}]", f"bad offset {off!r} (use T-<n>d, T-<n>h or "
                      "T-<n>m, e.g. T-3h)")
    for name in ("full", "stewards", "summary"):
        _audience_refs(c, f, f"audiences.{name}", getattr(br.audiences, name), audiences)


class InspectionItem(Strict):
    key: Annotated[str, Field(pattern=r"^[a-z0-9_]{1,32}$")]
    label: Annotated[str, Field(min_length=1, max_length=120)]
    role: str
    zone: str
    due_h: Annotated[int, Field(ge=0, le=14 * 24)]
    critical: bool = False
    incident_type: str = "other"
    # what a fail means, as the incident's title says it ("loose objects not removed")
    failed: Annotated[str, Field(max_length=120)] = ""


class InspectionGround(Strict):
    item: list[InspectionItem]


class InspectionsFile(Strict):
    grounds: dict[str, InspectionGround]


def _inspections(c: Checker, zones: dict[str, set[str]]) -> None:
    """Optional: the pre-event checklists name known grounds, zones, roles and types."""
    f = "inspections.toml"
    data = c.model(f, c.read(f, required=False), InspectionsFile)
    if data is None:
        return
    for gid, ground in data.grounds.items():
        if zones and gid not in zones:
            c.add(f, f"grounds.{gid}", f"{gid!r} is not a ground in grounds/")
        keys: set[str] = set()
        for i, item in enumerate(ground.item):
            key = f"grounds.{gid}.item[{i}]"
            if item.key in keys:
                c.add(f, f"{key}.key", f"{item.key!r} is listed twice")
            keys.add(item.key)
            if ROLES.resolve(item.role) is None:
                c.add(f, f"{key}.role", f"unknown role {item.role!r}")
            if gid in zones and item.zone not in zones[gid]:
                c.add(f, f"{key}.zone", f"{item.zone!r} is not a zone of {gid}")
            if INCIDENT_TYPES.resolve(item.incident_type) is None:
                c.add(f, f"{key}.incident_type", f"unknown incident type {item.incident_type!r}")


def _roster(c: Checker, zones: dict[str, set[str]]) -> None:
    f = "roster.toml"
    roster = c.model(f, c.read(f), RosterFile)
    if roster is None:
        return
    every_zone = set().union(*zones.values()) if zones else set()
    seen: set[str] = set()
    for i, u in enumerate(roster.user):
        key = f"user[{i}]"
        if u.platform not in PLATFORMS:
            c.add(f, f"{key}.platform", f"unknown platform {u.platform!r} "
                  f"({', '.join(PLATFORMS)})")
        if ROLES.resolve(u.role) is None:
            c.add(f, f"{key}.role", f"unknown role {u.role!r} (roles: {', '.join(ROLES.keys())})")
        if u.zone and zones and u.zone not in every_zone:
            c.add(f, f"{key}.zone", f"{u.zone!r} is not a zone of any ground in grounds/")
        uid = str(u.id)
        if u.platform == "telegram" and not TELEGRAM_CHAT.match(uid):
            c.add(f, f"{key}.id", f"a Telegram user id is a number (got {u.id!r})")
        if u.platform == "slack" and not SLACK_USER.match(uid):
            c.add(f, f"{key}.id", f"a Slack user id looks like U0123ABCD (got {u.id!r})")
        if f"{u.platform}:{uid}" in seen:
            c.add(f, f"{key}.id", f"{u.platform}:{uid} is listed twice")
        seen.add(f"{u.platform}:{uid}")


def check_clubs(clubs: list[Club], env: Mapping[str, str],
                grounds: Collection[str]) -> tuple[list[str], int]:
    """(one line per club, clubs failing): each enabled club's secret references resolve
    and its grounds are in the config; a line names the club and the ref, never a value."""
    lines: list[str] = []
    failing = 0
    for club in clubs:
        if not club.enabled:
            lines.append(f"club {club.club_id}: disabled, not checked")
            continue
        missing = [f"{SECRET_FIELDS[f]} {ref}" for f, ref in club.secrets().items()
                   if not ref.resolves(env)]
        unknown = [g for g in club.grounds if g not in grounds]
        problems = ([f"secret missing: {', '.join(missing)}"] if missing else []) + \
            ([f"ground not in the config: {', '.join(unknown)}"] if unknown else [])
        failing += bool(problems)
        lines.append(f"club {club.club_id}: " + ("; ".join(problems) if problems else
                                                  f"OK ({len(club.secrets())} secrets set)"))
    return lines, failing
