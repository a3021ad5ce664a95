"""The per-steward record for the club: for each fixture a steward worked, their tabard, the
rota's name for them, the post they filled, when they checked in and stood down, and the
briefing version they signed off — from each fixture's log and rota, as a CSV under a signed
manifest (like every other export). Nothing beyond what the club's rota holds: no platform
account, no phone number."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from bot.domain.deployment import posts_of
from bot.domain.duty_credit import credited
from bot.domain.fixture.fixture_model import Fixture
from bot.domain.grounds import Ground
from bot.domain.ledger import Event
from bot.evidence.club_label import labelled
from bot.evidence.csv_cells import write_rows
from bot.evidence.export import MANIFEST, file_sha, signed_part
from bot.evidence.signing import public_hex, sign
from bot.store import Store
from bot.store.facades import StoreFacades

FILE = "stewards.csv"
PDF_FILE = "stewards.pdf"
FORMAT = "matchday-stewards-1"
HEAD = ["fixture", "kickoff", "title", "tabard", "name", "post", "post_name", "zone",
        "checked_in", "stood_down", "briefing_version", "briefing_signed_off"]


@dataclass(frozen=True)
class Duty:
    """One steward's duty at one fixture, as the club's rota and the log have it."""

    fixture: str
    kickoff: str
    title: str
    tabard: str
    name: str
    post: str
    post_name: str
    zone: str
    checked_in: str = ""  # ISO UTC, '' when they never checked in
    stood_down: str = ""
    briefing_version: str = ""
    briefing_signed_off: str = ""

    def row(self) -> list[str]:
        """The CSV row (HEAD's order)."""
        return [getattr(self, k) for k in HEAD]


def duties(fx: Fixture, events: list[Event], filled: dict[str, tuple[str, str]],
           links: dict[str, str], post_names: dict[str, tuple[str, str]]) -> list[Duty]:
    """Every rota steward's duty at a fixture (by tabard). An account's check-ins, stand-down
    and sign-off are theirs through the tabard link, else through the rota post they checked
    in on last (bot/domain/duty_credit.py)."""
    tabard_of = credited(events, links, filled)
    checked_in: dict[str, str] = {}
    stood_down: dict[str, str] = {}
    briefed: dict[str, tuple[str, str]] = {}
    for ev in events:  # in log order: the first check-in, the last stand-down and sign-off
        if ev.kind == "steward.onpost":
            if (t := tabard_of.get(ev.by, "")):
                checked_in.setdefault(t, ev.at)
        elif ev.kind == "steward.standdown":
            for who in ev.data.get("who") or [ev.by]:
                if (t := tabard_of.get(str(who), "")):
                    stood_down[t] = ev.at
        elif ev.kind == "briefing.acknowledged" and (t := tabard_of.get(ev.by, "")):
            briefed[t] = (str(ev.data.get("version", "")), ev.at)
    out = []
    for post, (t, name) in sorted(filled.items(), key=lambda kv: (kv[1][0], kv[0])):
        pname, zone = post_names.get(post, (post, ""))
        version, signed = briefed.get(t, ("", ""))
        out.append(Duty(fx.id, fx.kickoff.isoformat(), fx.title, t, name, post, pname, zone,
                        checked_in.get(t, ""), stood_down.get(t, ""), version, signed))
    return out


async def fixture_duties(store: Store, facades: StoreFacades, fx: Fixture, ground: Ground,
                         config_dir: Path) -> list[Duty]:
    """The duties of one fixture, from its rota and its log."""
    state = facades.stewarding
    filled, _ = await state.deployment(fx.id)
    if not filled:
        return []
    posts = {p.id: (p.name, p.zone) for p in posts_of(config_dir, fx.ground or ground.id, fx.id)}
    return duties(fx, await store.events(fx.id), filled, await state.tabards(), posts)


def as_csv(rows: list[Duty]) -> str:
    """The record as CSV text (header first)."""
    buf = io.StringIO()
    write_rows(buf, HEAD, (d.row() for d in rows), lineterminator="\n")
    return buf.getvalue()


async def export_stewards(store: Store, facades: StoreFacades, fixtures: list[Fixture],
                          grounds: dict[str, Ground],
                          config_dir: Path, out_dir: Path | str, *, key: Ed25519PrivateKey,
                          scope: dict[str, str], at: str, by: str = "cli:stewards",
                          unix_user: str = "", tabard: str = "",
                          pdf: Callable[[list[Duty], str, str], bytes] | None = None
                          ) -> tuple[Path, list[Duty]]:
    """Write stewards.csv (and, with `pdf`, what it renders of the rows, the scope and the
    public key: stewards.pdf) and their signed manifest for these fixtures (one steward's
    with `tabard`); (folder, rows)."""
    rows: list[Duty] = []
    for fx in sorted(fixtures, key=lambda f: f.kickoff):
        ground = grounds.get(fx.ground) or next(iter(grounds.values()))
        rows += await fixture_duties(store, facades, fx, ground, config_dir)
    if tabard:
        rows = [d for d in rows if d.tabard == tabard]
        scope = {**scope, "tabard": tabard}
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / FILE).write_text(as_csv(rows), encoding="utf-8")
    files = [FILE]
    if pdf is not None:
        named = "; ".join(f"{k} {v}" for k, v in scope.items())
        (out / PDF_FILE).write_bytes(pdf(rows, named, public_hex(key)))
        files.append(PDF_FILE)
    manifest: dict[str, Any] = {"format": FORMAT, **scope, "fixtures": [f.id for f in fixtures],
                                "rows": len(rows), "exported_at": at,
                                "files": {n: file_sha(out / n) for n in files},
                                "public_key": public_hex(key)}
    manifest = labelled(manifest, store)  # whose record, under the signature
    manifest["signature"] = sign(key, signed_part(manifest))
    (out / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    await facades.audit.audit(by, "export.stewards", f"{len(rows)} duties of "
                              f"{len(fixtures)} fixture(s) ({json.dumps(scope)})", at, unix_user)
    return out, rows


def in_scope(fixtures: list[Fixture], fixture: str | None,
             season: str | None) -> list[Fixture]:
    """The fixtures a --fixture or --season names."""
    if fixture:
        return [f for f in fixtures if f.id == fixture]
    return [f for f in fixtures if f.season == season]
