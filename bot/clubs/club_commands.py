"""`matchday club add|list|show|enable|disable`: what each does, as lines to print. Secrets
are named by reference only; a line says whether each resolves, never what it holds."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass

from bot.clubs.club_directory import ClubDirectory
from bot.domain.club_record import (
    SECRET_FIELDS,
    Club,
    ClubError,
    parse_club_id,
    parse_grounds,
    parse_name,
    parse_ref,
    parse_retention,
)
from bot.domain.outcomes import Reason

# The command line's option for each secret field.
OPTIONS = {"telegram_token": "--telegram-token", "telegram_secret": "--telegram-secret",
           "slack_token": "--slack-token", "slack_signing_secret": "--slack-signing-secret"}


@dataclass(frozen=True)
class Caller:
    """Who runs a command and when: the claimed name, the Unix account, the time (ISO)."""

    who: str
    unix_user: str
    at: str


@dataclass(frozen=True)
class NewClub:
    """`club add`'s arguments as typed on the command line (checked by `build_club`)."""

    club_id: str
    name: str
    refs: Mapping[str, str]  # secret field -> its reference as typed
    grounds: list[str]
    retention_days: int


def build_club(new: NewClub, known_grounds: Collection[str] | None = None) -> Club:
    """The club `club add` describes, enabled; ClubError naming the first bad argument."""
    club_id = parse_club_id(new.club_id)
    refs = [parse_ref(OPTIONS[f], new.refs[f]) for f in SECRET_FIELDS]
    grounds = parse_grounds(new.grounds)
    if known_grounds is not None:
        unknown = [g for g in grounds if g not in known_grounds]
        if unknown:
            raise ClubError(f"no ground {unknown[0]!r} in the config (grounds: "
                            f"{', '.join(sorted(known_grounds)) or 'none'})")
    return Club(club_id, parse_name(new.name), True, *refs, grounds=grounds,
                retention_days=parse_retention(new.retention_days))


def secret_lines(club: Club, env: Mapping[str, str]) -> list[str]:
    """One line per secret: what it is, its reference, ✓ set or ✗ missing (no value)."""
    return [f"  {SECRET_FIELDS[f]:<24} {ref}  "
            + ("✓ set" if ref.resolves(env) else "✗ missing")
            for f, ref in club.secrets().items()]


def headline(club: Club) -> str:
    """A club in one line: id, state, name, grounds."""
    return (f"{club.club_id}  {'enabled' if club.enabled else 'DISABLED'}  {club.name}"
            f"  grounds: {', '.join(club.grounds) or '-'}")


class ClubCommands:
    """The club subcommands over the registry; each returns the lines to print and raises
    ClubError (one line) when refused."""

    def __init__(self, clubs: ClubDirectory, env: Mapping[str, str]) -> None:
        self.clubs = clubs
        self.env = env

    async def add(self, new: NewClub, caller: Caller,
                  known_grounds: Collection[str] | None = None) -> list[str]:
        """Register a club (enabled); refused if the id is taken."""
        club = build_club(new, known_grounds)
        if await self.clubs.add(club, caller.who, caller.at, caller.unix_user) is not None:
            raise ClubError(f"club {club.club_id!r} exists already: nothing changed "
                            f"(`matchday club show {club.club_id}`; clubs are never replaced)")
        missing = [ref for ref in club.secrets().values() if not ref.resolves(self.env)]
        return [f"Added club {club.club_id} ({club.name}), enabled.",
                *secret_lines(club, self.env),
                *([f"{len(missing)} secret(s) missing here: `matchday check-config` checks "
                   "them where the bot runs"] if missing else [])]

    async def list(self) -> list[str]:
        """Every club with its secrets' references and whether each resolves."""
        clubs = await self.clubs.clubs()
        if not clubs:
            return ["No clubs registered (matchday club add ID --name ... adds one)."]
        return [line for club in clubs for line in (headline(club),
                                                     *secret_lines(club, self.env))]

    async def show(self, club_id: str) -> list[str]:
        """One club: its state, grounds, retention, secrets' references and its history."""
        club = await self._known(club_id)
        history = [f"  {e.get('at', '')}  {e.get('action', '')}  by {e.get('who', '')}"
                   + (f" [unix {e['unix_user']}]" if e.get("unix_user") else "")
                   for e in await self.clubs.history(club.club_id)]
        return [headline(club), f"  retention: {club.retention_days} days",
                *secret_lines(club, self.env), "history:", *history]

    async def set_enabled(self, club_id: str, enabled: bool, caller: Caller) -> list[str]:
        """Enable or disable a club (recorded in the registry's audit trail)."""
        club = await self._known(club_id)
        reason = await self.clubs.set_enabled(club.club_id, enabled, caller.who, caller.at,
                                              caller.unix_user)
        if reason is Reason.NO_CLUB:
            raise ClubError(_unknown(club.club_id))
        was = " (it was already)" if club.enabled == enabled else ""
        if enabled:
            return [f"Club {club.club_id} enabled{was}."]
        return [f"Club {club.club_id} disabled{was}: kept, with its history "
                f"(`matchday club enable {club.club_id}` enables it again)."]

    async def _known(self, club_id: str) -> Club:
        """The registered club of this id; ClubError when the id is bad or unknown."""
        club = await self.clubs.get(parse_club_id(club_id))
        if club is None:
            raise ClubError(_unknown(club_id))
        return club


def _unknown(club_id: str) -> str:
    return f"no club {club_id!r} (matchday club list shows them)"
