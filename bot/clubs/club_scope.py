"""Which club a one-shot command works in (`matchday --club ID <command>`): the club must be
registered; a disabled club's records may still be read (its export, pack or figures are
evidence and stay so) but nothing is written into them; commands where a club makes no
sense refuse the option."""

from __future__ import annotations

from bot.clubs.club_directory import ClubDirectory
from bot.domain.club_record import Club, ClubError, parse_club_id

# Commands that read a club's records (they may add their own audit entry: who read what).
READS = frozenset({"summary", "report", "fixtures", "export", "pack", "stewards", "season",
                   "heads"})
# Commands that write into a club's records: a disabled club refuses them.
WRITES = frozenset({"replay", "ingress-replay", "martyns-law", "web-link"})
# Commands of the deployment or of files, not of one club's records: why --club is refused.
UNSCOPED = {
    "run": "the bot serves every enabled club at once",
    "check-config": "it checks the whole deployment, every club",
    "club": "the club commands name their club themselves",
    "keys": "the signing key is the installation's, not a club's",
    "verify": "it checks files only (their manifest names the club)",
    "demo": "the demo replays into a throwaway store of its own",
}


def unscoped_refusal(command: str, club_id: str) -> str | None:
    """Why `--club` cannot go with this command or is not a club id (one line), or None."""
    if command in UNSCOPED:
        return f"--club does not go with `{command}`: {UNSCOPED[command]}"
    if command not in READS | WRITES:
        return f"--club does not go with `{command}`"
    try:
        parse_club_id(club_id)
    except ClubError as exc:
        return f"--club: {exc}"
    return None


async def club_for(directory: ClubDirectory, club_id: str, command: str) -> Club:
    """The registered club the command may work in; ClubError (one line) when there is no
    such club, or it is disabled and the command would write into its records."""
    club = await directory.get(club_id)
    if club is None:
        raise ClubError(f"no club {club_id!r} (matchday club list shows the clubs)")
    if not club.enabled and command not in READS:
        raise ClubError(f"club {club_id} is disabled: its records can be read (summary, "
                        f"export, pack, ...) but `{command}` would write into them")
    return club
