"""The `matchday` command: run the bot, replay a drill, the demo, summaries and lists."""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import re
import sys
import tempfile
from collections.abc import Awaitable, Callable
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bot.app import App, StartupError, check_config_or_fail
from bot.core.drill import Drill
from bot.domain.clock import VirtualClock
from bot.domain.plurals import counted
from bot.settings import Settings, SettingsError, load_settings

if TYPE_CHECKING:
    from bot.store import Store
    from bot.store.facades import StoreFacades, WebState

log = logging.getLogger("matchday")


def _store(app: App) -> Store:
    """The incident log the composition root (App) built, once the app has started."""
    assert app.store is not None
    return app.store


def _facades(app: App) -> StoreFacades:
    """The store's facades by purpose the composition root (App) built, once it has started."""
    assert app.facades is not None
    return app.facades


def _web(app: App) -> WebState:
    """The web view's state the composition root (App) built, once the app has started."""
    assert app.facades is not None
    return app.facades.web


def _fail(message: str, code: int = 2) -> int:
    from bot.observe.redact import redact

    for line in redact(message).splitlines() or [""]:
        print(f"matchday: {line}", file=sys.stderr)
    return code


def _check_config(settings: Settings) -> int:
    try:
        files = check_config_or_fail(settings.config_dir)
    except StartupError as exc:
        print(exc)
        return 1
    print(f"config OK: {files} files in {settings.config_dir}")
    if settings.redis_url is None:  # the embedded store is not started just to look
        return 0
    try:
        return asyncio.run(_with_app(settings, _check_clubs))
    except StartupError as exc:
        print(f"clubs not checked: {exc}")
    except Exception as exc:  # Redis went away mid-check: one line, never a traceback
        from bot.observe.redact import redact

        print(redact(f"clubs not checked: {exc.__class__.__name__}: {exc}"))
    return 1


async def _check_clubs(app: App) -> int:
    """One line per registered club: its secrets resolve here, its grounds are known."""
    from bot.clubs.club_settings import club_config_dir
    from bot.config_check import check_clubs
    from bot.settings import secret_environment

    assert app.core is not None
    clubs = await _facades(app).clubs.clubs()
    lines, failing = check_clubs(clubs, secret_environment(), app.core.grounds)
    for line in lines:
        print(line)
    base = app.settings.config_dir
    for club in clubs:  # a club's own config directory, checked as the deployment's is
        own = club_config_dir(base, club.club_id)
        if club.enabled and own != base:
            try:
                files = check_config_or_fail(own)
            except StartupError as exc:
                print(f"club {club.club_id}: {own}: {' '.join(str(exc).split())}")
                failing += 1
            else:
                print(f"club {club.club_id}: config OK: {files} files in {own}")
    return 1 if failing else 0


async def _with_app(settings: Settings, body: Callable[[App], Awaitable[int]],
                    clock: Any = None, *, serving: bool = False,
                    drill: Drill | None = None, club: str = "", command: str = "") -> int:
    app = App(settings, clock, serving=serving, drill=drill, club=club)
    try:
        await app.start()
        if club:
            from bot.clubs.club_scope import club_for
            from bot.domain.club_record import ClubError

            try:
                await club_for(_facades(app).clubs, club, command)
            except ClubError as exc:
                return _fail(str(exc), 1)
        return await body(app)
    finally:
        await app.stop()


# ---------------------------------------------------------------- run
async def _run(app: App, args: argparse.Namespace) -> int:
    from bot.runtime import run_bot

    clubs = [c for c in await _facades(app).clubs.clubs() if c.enabled]
    if clubs:  # a deployment of many clubs: each its own bots, under /c/<club>/
        from bot.clubs.club_runtime import run_deployment

        return await run_deployment(app, clubs, webhook=args.webhook)
    return await run_bot(app, as_role=args.as_role, webhook=args.webhook, http=args.http,
                         console=args.console, web=args.web)


# ---------------------------------------------------------------- replay / demo
async def _replay(app: App, path: Path, as_json: bool, kept: bool = True) -> int:
    """Replay a script into the app's drill (App(drill=...): its own fixtures, or --live);
    `kept`: the store outlives the run (the demo's does not: no pointers to it)."""
    from bot.replay import ScriptError, parse_script, printer, replay
    from bot.runtime import make_scheduler

    script = parse_script(path)
    for no, problem in script.bad:  # named and skipped: the rest of the drill still runs
        _fail(f"{path.name}:{no}: line skipped: {problem}")
    if not script.lines:
        raise ScriptError(f"{path.name}: no lines" + (" that can run" if script.bad else ""))
    lines = script.lines
    assert isinstance(app.clock, VirtualClock)
    app.clock.set(lines[0].at)
    assert app.core is not None and app.core.drill is not None
    scheduler = make_scheduler(app, live=False)
    await scheduler.start()
    try:
        refused = await replay(app.core, scheduler, app.clock, lines, path.name,
                               printer(as_json, tz=app.core.settings.zone))
    finally:
        await scheduler.stop()
    if kept and not as_json and app.core.drill.created:
        club = f"--club {app.club} " if app.club else ""
        for fx in sorted(app.core.drill.created):
            print(f"\nReplayed into {fx}: `matchday {club}summary --fixture {fx}`, or the control "
                  f"room at /control/?fixture={fx} (matchday run --web)")
    if refused:
        print(f"matchday: replay: {len(refused)} of {len(lines)} lines refused (the first: "
              f"{refused[0]})", file=sys.stderr)
    if script.bad:
        return _fail(f"{path.name}: {len(lines)} lines replayed, "
                     f"{counted(len(script.bad), 'bad line')} skipped", 1)
    return 1 if len(refused) == len(lines) else 0


def demo_script() -> Path:
    """The bundled West Ham v Chelsea scenario."""
    return Path(str(resources.files("bot").joinpath("scenarios/west_ham_chelsea.jsonl")))


async def _demo(app: App, as_json: bool) -> int:
    from bot.evidence.summary import summary_figures, summary_text

    code = await _replay(app, demo_script(), as_json, kept=False)
    assert app.core is not None
    fx = await app.core.active_fixture()
    if fx is not None and not as_json:
        fig = await summary_figures(_store(app), _facades(app), fx)
        ground = app.core.grounds[fx.ground]
        print(f"\n=== Final summary: {fx.title} ({fx.id}) ===")
        print(summary_text(fig, ground))
        print(f"\nThe demo's store is thrown away. To keep the night (its summary, debrief "
              f"pack and control room): matchday replay {demo_script()}")
    return code


async def _web_link(app: App, by: str) -> int:
    from bot.web.access import Access

    assert app.core is not None
    access = Access(app.core, _facades(app))
    server = await access.running()  # the running server's, not this shell's PORT
    if server is None:
        return _fail("no control-room server is running: start the bot with `matchday run "
                     "--web`, then ask again", 1)
    url = await access.issue_link(by, server) if ":" in by else None
    if url is None:
        return _fail(f"--by {by!r} is not a member (platform:user, e.g. console:control)", 1)
    await _facades(app).audit.audit(by, "cli.web-link", "sign-in link issued on the command line",
                               _now(app), unix_user())
    print(url)
    return 0


def unix_user() -> str:
    """Who runs this command, by the operating system's account (not the claimed --by)."""
    import pwd

    uid = os.geteuid()
    try:
        return f"{pwd.getpwuid(uid).pw_name} (uid {uid})"
    except KeyError:  # an account with no passwd entry (some containers)
        return f"uid {uid}"


def _now(app: App) -> str:
    from bot.domain.clock import iso

    return iso(app.clock.now())


# ---------------------------------------------------------------- read-only views
async def _summary(app: App, fixture_id: str, as_json: bool) -> int:
    from bot.evidence.summary import summary_figures, summary_text

    assert app.core is not None
    fx = await _store(app).fixture(fixture_id)
    if fx is None:
        return _fail(f"no fixture '{fixture_id}' (matchday fixtures lists them)", 1)
    fig = await summary_figures(_store(app), _facades(app), fx)
    if as_json:
        from bot.evidence.debrief.figures import TIME_COLUMNS, incident_rows

        rows = incident_rows(await _store(app).events(fx.id))
        fig["incident_times"] = {f"INC-{r.n}": {"reported_at": r.reported.isoformat(),
                                                **dict(zip(TIME_COLUMNS, r.times, strict=True))}
                                 for r in rows}
        print(json.dumps(fig, indent=2))
    else:
        print(f"{fx.title} ({fx.id})")
        print(summary_text(fig, app.core.grounds.get(fx.ground)
                           or next(iter(app.core.grounds.values()))))
    return 0


async def _export(app: App, args: argparse.Namespace) -> int:
    from bot.evidence.export import export_fixture

    core = app.core
    assert core is not None
    if await _store(app).fixture(args.fixture) is None:
        return _fail(f"no fixture '{args.fixture}' (matchday fixtures lists them)", 1)
    by = "cli:export"
    if args.restricted:  # custody references: police and admin only, and on the audit trail
        member = await core.member(args.by) if args.by and ":" in args.by else None
        if member is None or not core.roles.allowed(member.role, "export"):
            return _fail("--restricted needs --by <platform:user> of a police or admin member "
                         "(e.g. --by console:police_commander)", 1)
        by = member.who
    from bot.evidence.signing import load_or_create, public_hex

    key = load_or_create(app.settings.data_dir)
    out = await export_fixture(_store(app), _facades(app), args.fixture, args.out, args.restricted,
                               by=by,
                               key=key, at=_now(app), unix_user=unix_user())
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    print(f"Exported {args.fixture} to {out}" + (" (restricted: custody refs and "
                                                 "intelligence included)"
                                                 if args.restricted else ""))
    print(f"{manifest['events']} events, chain head {manifest['head']}; signed by key "
          f"{public_hex(key)}")
    return 0


async def _stewards(app: App, args: argparse.Namespace) -> int:
    from bot.evidence.debrief.period import parse_period
    from bot.evidence.duty_pdf import duty_pdf
    from bot.evidence.duty_record import as_csv, export_stewards, in_scope
    from bot.evidence.signing import load_or_create

    core = app.core
    assert core is not None
    if args.season:
        try:
            parse_period(None, args.season)
        except ValueError as exc:
            return _fail(str(exc), 2)
    store = _store(app)
    # a fixture named by id may be a drill's, as `summary`, `pack` and `export` accept
    known = [*await store.fixtures(), *(await store.fixtures(drill=True) if args.fixture else [])]
    fixtures = in_scope(known, args.fixture, args.season)
    if args.fixture and not fixtures:
        return _fail(f"no fixture '{args.fixture}' (matchday fixtures lists them)", 1)
    scope = {"fixture": args.fixture} if args.fixture else {"season": args.season}
    out_dir = args.out or app.settings.data_dir / "stewards" / (args.fixture or args.season)
    out, rows = await export_stewards(_store(app), _facades(app), fixtures, core.grounds,
                                      app.settings.config_dir, out_dir,
                                      key=load_or_create(app.settings.data_dir), scope=scope,
                                      at=_now(app), unix_user=unix_user(),
                                      tabard=args.tabard or "",
                                      pdf=lambda rows, named, pub: duty_pdf(
                                          rows, named, app.clock.now(), pub, app.settings.zone))
    if args.tabard and not rows:
        print(f"tabard {args.tabard} has no duty in this scope (the record says so)",
              file=sys.stderr)
    if args.csv:
        print(as_csv(rows), end="")
    print(f"{len(rows)} steward duties of {len(fixtures)} fixture(s) in {out / 'stewards.csv'} "
          "and stewards.pdf, under a signed manifest (matchday verify checks it)",
          file=sys.stderr if args.csv else sys.stdout)
    return 0


async def _martyns_law(app: App, args: argparse.Namespace) -> int:
    from bot.evidence.signing import load_or_create
    from bot.publicprotection.protection_export import write_document
    from bot.publicprotection.protection_plan import PlanError, load_plan

    core = app.core
    assert core is not None
    ground = core.grounds.get(args.ground)
    if ground is None:
        return _fail(f"no ground '{args.ground}' (grounds: {', '.join(sorted(core.grounds))})")
    path = Path(app.settings.config_dir) / "grounds" / f"{args.ground}.toml"
    try:
        plan = load_plan(path) if path.exists() else None
    except PlanError as exc:
        return _fail(f"grounds/{path.name}: {exc}", 1)
    if plan is None:
        return _fail(f"grounds/{path.name} has no [martyns_law] section: add the duty holder, "
                     "[[procedure]] and [[measure]] tables (see the README)")
    store, facades = _store(app), _facades(app)
    if args.sent is not None:
        revs = {r.n: r for r in await facades.protection.revisions(ground.id)}
        if args.sent not in revs:
            return _fail(f"{ground.id} has no revision {args.sent} (revisions: "
                         f"{', '.join(map(str, sorted(revs))) or 'none yet'})")
        await facades.protection.mark_sent(ground.id, args.sent, _now(app))
        await facades.audit.audit("cli:martyns-law", "martyns_law.sent",
                                  f"{ground.id} revision "
                                  f"{args.sent} sent to the regulator", _now(app), unix_user())
        print(f"Revision {args.sent} of {plan.ground_name}'s document recorded as sent to the "
              f"{plan.regulator}; its reminder stops.")
        return 0
    out = args.out or Path(app.settings.data_dir) / "martyns_law" / ground.id
    w = await write_document(store, facades, plan, ground, out,
                             key=load_or_create(app.settings.data_dir),
                             at=_now(app), tz=app.settings.zone, unix_user=unix_user())
    doc = w.document
    state = ("NEW revision: send it to the " + plan.regulator + " by "
             f"{doc.due.astimezone(app.settings.zone):%d %b %Y}") if w.revised else \
        ("unchanged" + ("; sent to the regulator" if doc.sent_at else
                        f"; due with the {plan.regulator} by "
                        f"{doc.due.astimezone(app.settings.zone):%d %b %Y}"))
    print(f"Martyn's Law document of {plan.ground_name}, revision {doc.revision} ({state}), "
          f"with {len(doc.drills)} drilled procedure(s), in {w.folder}: martyns_law.pdf "
          f"({w.pages} pages), martyns_law.json, under a signed manifest")
    return 0


async def _ingress_replay(app: App, path: str, fixture: str) -> int:
    from bot.ingress.ingress_desk import IngressDesk
    from bot.ingress.ingress_replay import replay_counts

    core = app.core
    assert core is not None
    fx = await _store(app).fixture(fixture)
    if fx is None:
        return _fail(f"no fixture '{fixture}' (matchday fixtures lists them)", 1)
    try:
        got = await replay_counts(IngressDesk(core), fx, Path(path), core.clock)
    except (ValueError, KeyError) as exc:
        return _fail(f"{Path(path).name}: not a file of counts ({exc})", 1)
    print(f"{got.counted} batches counted into {fx.id} ({got.people:,} people), "
          f"{got.again} counted before, {got.alerts} alerts sent, {len(got.refused)} refused")
    for reason in got.refused[:10]:
        print(f"  refused: {reason}")
    return 1 if got.refused else 0


async def _pack(app: App, args: argparse.Namespace) -> int:
    from bot.domain.briefing.briefing_cadence import config_for
    from bot.evidence.debrief.pack_folder import build_pack
    from bot.evidence.signing import load_or_create

    core = app.core
    assert core is not None
    key = load_or_create(app.settings.data_dir)
    if not args.fixture:
        from bot.evidence.debrief.period import build_period, parse_period

        try:
            period = parse_period(args.month, args.season)
        except ValueError as exc:
            return _fail(str(exc), 2)
        folder, n = await build_period(
            _store(app), _facades(app), period, core.grounds, app.settings.config_dir,
            config_for(app.settings).tz,
            args.out or Path(app.settings.data_dir) / "packs" / period.value, key=key,
            at=_now(app), by="cli:pack")
        print(f"Debrief packs of {n} fixture(s) of {period.kind} {period.value} in {folder}: "
              "period.pdf, period.csv and one pack per fixture, under a signed manifest")
        return 0
    fx = await _store(app).fixture(args.fixture)
    if fx is None:
        return _fail(f"no fixture '{args.fixture}' (matchday fixtures lists them)", 1)
    ground = core.grounds.get(fx.ground) or next(iter(core.grounds.values()))
    out = args.out or Path(app.settings.data_dir) / "packs" / fx.id
    pack = await build_pack(_store(app), _facades(app), fx, ground, app.settings.config_dir,
                            config_for(app.settings).tz, out, key=key, at=_now(app),
                            by="cli:pack")
    print(f"Debrief pack of {fx.id} in {pack.folder}: {pack.pages}-page {pack.folder / 'pack.pdf'}"
          f", {len(pack.files)} files in the signed manifest; chain head {pack.head}")
    return 0


def _installation_key() -> str | None:
    """This installation's public key, when its data dir holds one (verify's default)."""
    from bot.evidence.signing import installed_public

    try:
        return installed_public(load_settings().data_dir)
    except SettingsError:
        return None  # no installation here to speak of: the pack's own key is shown


def _verify(args: argparse.Namespace) -> int:
    from bot.evidence.signing import SigningKeyError
    from bot.evidence.verify import read_key_arg, verify_dir

    try:
        key = read_key_arg(args.key) if args.key is not None else _installation_key()
    except SigningKeyError as exc:
        return _fail(str(exc))
    key_from = "given" if args.key is not None else "installation" if key else ""
    if args.head is not None and not re.fullmatch(r"[0-9a-fA-F]{64}", args.head.strip()):
        return _fail("--head takes a chain head: 64 hex digits (matchday heads lists them)")
    try:
        result = verify_dir(args.dir, key, args.head, key_from)
    except Exception as exc:  # a last line of defence: one line, never a traceback
        return _fail(f"verify failed: {exc.__class__.__name__}: {str(exc)[:200]}", 1)
    print(result)
    return 0 if result.ok else 1


def _keys_quietly(settings: Settings) -> int:
    from bot.evidence.signing import SigningKeyError, load_or_create

    try:
        load_or_create(settings.data_dir)
    except (SigningKeyError, OSError) as exc:
        return _fail(f"signing key: {exc}", 1)
    return 0


def _keys(settings: Settings) -> int:
    from bot.evidence.signing import SigningKeyError, key_path, load_or_create, public_hex

    try:
        key = load_or_create(settings.data_dir)
    except (SigningKeyError, OSError) as exc:
        return _fail(f"signing key: {exc}", 1)
    print(f"Export signing key (Ed25519, public): {public_hex(key)}")
    print(f"Private key file: {key_path(settings.data_dir)} (keep it; never share it)")
    return 0


async def _heads(app: App, fixture_id: str) -> int:
    from bot.evidence.export import chain_head

    assert app.core is not None
    store = _store(app)
    if await store.fixture(fixture_id) is None:
        return _fail(f"no fixture '{fixture_id}' (matchday fixtures lists them)", 1)
    mark = f"fixture={fixture_id} "
    rows = [a for a in reversed(await _facades(app).audit.audit_log(100_000,
                                                                    fixture=fixture_id))
            if a.get("action") in ("fixture.closed", "export.head")
            and a.get("detail", "").startswith(mark)]
    for a in rows:
        print(f"{a['at']}  {a['action']:<15} {a['detail'][len(mark):]}  by {a['who']}"
              + (f" [unix {a['unix_user']}]" if a.get("unix_user") else ""))
    n, head = await chain_head(store, fixture_id)
    print(f"now{' ' * 18}  {'(current)':<15} events={n} head={head}")
    return 0


async def _report(app: App, fixture_id: str, pdf: bool, out: Path | None) -> int:
    """The post-match report of a fixture (for the FA and the SAG), as a PDF file."""
    from bot.domain.groundmap import load_map
    from bot.evidence.match_chart import chart_from_counts, draw_chart
    from bot.evidence.postmatch import build_report, report_pdf

    assert app.core is not None
    core = app.core
    fx = await _store(app).fixture(fixture_id)
    if fx is None:
        return _fail(f"no fixture {fixture_id!r} (`matchday fixtures` lists them)", 1)
    if not pdf:
        return _fail("say --pdf (the report is made as a PDF; the web view has the page)", 2)
    ground = core.grounds.get(fx.ground) or next(iter(core.grounds.values()))
    tz = core.settings.zone
    rep = await build_report(_store(app), _facades(app), _web(app).feed, fx, ground, tz,
                             app.clock.now())
    data = chart_from_counts(await _facades(app).views.chart_counts(fx.id))
    png = await draw_chart(data, fx.title, tz, fx.kickoff) if data else None
    path = out or Path(f"{fx.id}-post-match.pdf")
    path.write_bytes(report_pdf(rep, png, tz, load_map(core.settings.config_dir, ground)))
    await _facades(app).audit.audit("cli", "report.pdf", f"post-match PDF of {fx.id}: {path.name}",
                           _now(app), unix_user(), fixture=fx.id)
    print(f"{path} ({len(rep.rows)} incidents; chain head {rep.chain_head})")
    return 0


async def _fixtures(app: App, as_json: bool) -> int:
    from handlers.fixtures.commands import fixture_summary_fields

    assert app.core is not None
    rows = [fixture_summary_fields(f) for f in [*await _store(app).fixtures(),
                                                *await _store(app).fixtures(drill=True)]]
    if as_json:
        print(json.dumps(rows, indent=2))
    elif not rows:
        print("No fixtures.")
    else:
        for r in rows:
            print(f"{r['id']}  {r['home']} v {r['away']}  {r['kickoff']}  cat {r['category']}"
                  f"  {r['phase']}" + ("  cancelled" if r["status"] == "cancelled" else "")
                  + ("  DRILL" if r["drill"] else ""))
    return 0


async def _season(app: App, club: str, season: str | None, as_json: bool) -> int:
    from bot.domain.fixture.fixture_model import season_of
    from bot.evidence.season import season_table, season_text

    assert app.core is not None
    table = await season_table(_store(app), club, season or season_of(app.clock.now()))
    if as_json:
        print(json.dumps(table, indent=2))
    else:
        print(f"Season {table['season']} · {table['club']}")
        print(season_text(table))
    return 0


async def _club(app: App, args: argparse.Namespace) -> int:
    """`matchday club ...`: the command's lines, or one line saying why it was refused."""
    from bot.clubs.club_commands import OPTIONS, Caller, ClubCommands, NewClub
    from bot.domain.club_record import ClubError
    from bot.settings import secret_environment

    assert app.core is not None
    commands = ClubCommands(_facades(app).clubs, secret_environment())
    caller = Caller("cli:club", unix_user(), _now(app))
    try:
        if args.club_cmd == "add":
            new = NewClub(args.club_id, args.name, {f: getattr(args, f) for f in OPTIONS},
                          args.ground, args.retention_days)
            lines = await commands.add(new, caller, app.core.grounds)
        elif args.club_cmd == "list":
            lines = await commands.list()
        elif args.club_cmd == "show":
            lines = await commands.show(args.club_id)
        else:
            lines = await commands.set_enabled(args.club_id, args.club_cmd == "enable", caller)
    except ClubError as exc:
        return _fail(str(exc), 1)
    print("\n".join(lines))
    return 0


def _club_parser(sub: Any) -> None:
    """`matchday club add|list|show|enable|disable`."""
    from bot.clubs.club_commands import OPTIONS
    from bot.domain.club_record import DEFAULT_RETENTION_DAYS, SECRET_FIELDS

    cl = sub.add_parser("club", help="the clubs this deployment serves: add, list, show, "
                        "enable, disable (secrets by reference: env:VAR or file:/path)")
    csub = cl.add_subparsers(dest="club_cmd", required=True)
    add = csub.add_parser("add", help="register a club (enabled)")
    add.add_argument("club_id", metavar="ID", help="a slug: a-z, 0-9, - (e.g. west-ham)")
    add.add_argument("--name", required=True, help="the club's name")
    for field, option in OPTIONS.items():
        add.add_argument(option, required=True, metavar="REF",
                         help=f"where the {SECRET_FIELDS[field]} lives: env:VAR or file:/path")
    add.add_argument("--ground", action="append", default=[], metavar="NAME",
                     help="a ground of the club (a config/grounds id); repeat for more")
    add.add_argument("--retention-days", type=int, default=DEFAULT_RETENTION_DAYS,
                     help=f"days its records are kept (default {DEFAULT_RETENTION_DAYS})")
    csub.add_parser("list", help="every club, its secrets' references and whether each is set")
    for name, what in (("show", "one club, its secrets' references and its history"),
                       ("enable", "enable a club"),
                       ("disable", "disable a club (kept, never deleted)")):
        csub.add_parser(name, help=what).add_argument("club_id", metavar="ID")


def build_parser() -> argparse.ArgumentParser:
    """The command-line interface."""
    p = argparse.ArgumentParser(prog="matchday", description=__doc__)
    p.add_argument("--club", dest="tenant", metavar="ID", default="",
                   help="work in one registered club's records only (before the command: "
                        "matchday --club ID fixtures); a disabled club's can be read, "
                        "not written")
    sub = p.add_subparsers(dest="cmd", required=True)
    run = sub.add_parser("run", help="start the bot (console chat when no tokens are set)")
    run.add_argument("--as", dest="as_role", default="control",
                     help="console: who you are (a role: steward, control, ...)")
    run.add_argument("--webhook", action="store_true", help="Telegram webhook mode")
    run.add_argument("--http", action="store_true", help="Slack HTTP mode (no Socket Mode)")
    run.add_argument("--console", action="store_true",
                     help="also open the console chat when platform tokens are set")
    run.add_argument("--web", action="store_true",
                     help="serve the control-room web view at /control/ on PORT")
    rp = sub.add_parser("replay", help="feed a scripted matchday (JSON lines) on a virtual clock")
    rp.add_argument("file", type=Path)
    rp.add_argument("--json", action="store_true", help="one JSON line per outgoing message")
    rp.add_argument("--live", action="store_true",
                    help="let the drill log into the live (active) fixture; without it a "
                         "replay writes only into fixtures it creates")
    ir = sub.add_parser("ingress-replay", help="replay a file of turnstile counts (CSV at,"
                        "turnstile,count or JSON batches) into a fixture, for drills")
    ir.add_argument("file")
    ir.add_argument("--fixture", required=True)
    dm = sub.add_parser("demo", help="replay the West Ham v Chelsea night into a throwaway store")
    dm.add_argument("--json", action="store_true")
    sm = sub.add_parser("summary", help="post-match figures of a fixture")
    sm.add_argument("--fixture", required=True)
    sm.add_argument("--json", action="store_true")
    rpt = sub.add_parser("report", help="the post-match report of a fixture as an A4 PDF")
    rpt.add_argument("--fixture", required=True)
    rpt.add_argument("--pdf", action="store_true", help="make the PDF (the only form so far)")
    rpt.add_argument("--out", type=Path,
                     help="where to write it (default <fixture>-post-match.pdf)")
    fx = sub.add_parser("fixtures", help="fixtures in the store, with their ids")
    fx.add_argument("--json", action="store_true")
    ex = sub.add_parser("export", help="hash-chained evidence export of a fixture's log")
    ex.add_argument("--fixture", required=True)
    ex.add_argument("--out", required=True, type=Path)
    ex.add_argument("--by", help="who is exporting (platform:user), required with --restricted")
    ex.add_argument("--restricted", action="store_true",
                    help="include custody/occurrence refs (police and admin only; audited)")
    pk = sub.add_parser("pack", help="the debrief pack of a fixture (or of every fixture of a "
                        "month or season): PDF, CSVs, signed manifest")
    which = pk.add_mutually_exclusive_group(required=True)
    which.add_argument("--fixture")
    which.add_argument("--month", help="e.g. 2026-11: every fixture kicking off that month")
    which.add_argument("--season", help="e.g. 2026-27: every fixture of that season")
    pk.add_argument("--out", type=Path,
                    help="folder (default: <data dir>/packs/<fixture, month or season>)")
    st = sub.add_parser("stewards", help="the per-steward record for the club (fixtures worked, "
                        "posts, check-in and stand-down times, briefing sign-off): a CSV "
                        "and a PDF under a signed manifest")
    swhich = st.add_mutually_exclusive_group(required=True)
    swhich.add_argument("--fixture")
    swhich.add_argument("--season", help="e.g. 2026-27: every fixture of that season")
    st.add_argument("--out", type=Path,
                    help="folder (default: <data dir>/stewards/<fixture or season>)")
    st.add_argument("--csv", action="store_true", help="also print the CSV")
    st.add_argument("--tabard", help="one steward's record (their tabard number)")
    ml = sub.add_parser("martyns-law", help="a ground's Martyn's Law document of public-"
                        "protection procedures and measures (PDF + JSON, signed, revised when "
                        "its content changes) with its drill log")
    ml.add_argument("--ground", required=True)
    ml.add_argument("--out", type=Path,
                    help="folder (default: <data dir>/martyns_law/<ground>)")
    ml.add_argument("--sent", type=int, metavar="N",
                    help="record that revision N was sent to the regulator (stops its reminder)")
    se = sub.add_parser("season", help="season-to-date arrests and banning orders of a club")
    se.add_argument("--club", required=True)
    se.add_argument("--season", help="e.g. 2026-27 (default: the current season)")
    se.add_argument("--json", action="store_true")
    wl = sub.add_parser("web-link", help="a one-time sign-in link to the control-room view")
    wl.add_argument("--by", required=True, help="the member it signs in (platform:user)")
    sub.add_parser("check-config", help="check every config file (MATCHDAY_CONFIG_DIR) "
                   "without starting: one line per problem")
    vf = sub.add_parser("verify", help="check an export's signature and recompute its chain")
    vf.add_argument("dir", type=Path)
    vf.add_argument("--key", help="the public key it must be signed by: 64 hex digits, or a "
                                  "file holding them (matchday keys prints it)")
    vf.add_argument("--head", help="a chain head recorded in the audit trail (matchday heads) "
                                   "that must be one of the export's events")
    sub.add_parser("keys", help="the export-signing public key (made on first use)")
    hd = sub.add_parser("heads", help="chain heads of a fixture recorded at close and export")
    hd.add_argument("--fixture", required=True)
    _club_parser(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `matchday` console script."""
    # Everything the bot writes (AOF, exports, charts, keys) is for this account only.
    os.umask(0o077)
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    if args.tenant:
        from bot.clubs.club_scope import unscoped_refusal

        refused = unscoped_refusal(args.cmd, args.tenant)
        if refused is not None:
            return _fail(refused)
    if args.cmd == "verify":  # files only: no store needed
        return _verify(args)
    if args.cmd == "run":
        from bot.domain.vocab import ROLES

        role = ROLES.resolve(args.as_role)
        if role is None:
            return _fail(f"unknown role '{args.as_role}' for --as; roles: "
                         f"{', '.join(ROLES.keys())}")
        args.as_role = role
    overrides: dict[str, Any] = {}
    tmp = None
    if args.cmd == "demo":
        tmp = tempfile.TemporaryDirectory(prefix="matchday-demo-")
        overrides = {"REDIS_URL": None, "MATCHDAY_DATA_DIR": tmp.name,
                     "MATCHDAY_APPENDFSYNC": "no"}
    try:
        settings = load_settings(**overrides)
    except SettingsError as exc:
        return _fail(str(exc))
    if args.cmd == "check-config":
        return _check_config(settings)
    if args.cmd == "keys":
        return _keys(settings)
    if args.cmd == "run":  # the installation's export-signing key is made on its first run
        code = _keys_quietly(settings)
        if code:
            return code
    from bot.observe.logs import configure_logging
    from bot.observe.redact import settings_secrets

    configure_logging(settings.log_format, secrets=settings_secrets(settings))
    clock = None
    drill = None
    if args.cmd in ("replay", "demo", "ingress-replay"):
        from datetime import UTC, datetime

        clock = VirtualClock(datetime(2000, 1, 1, tzinfo=UTC))
        drill = Drill(live=args.cmd == "replay" and args.live) \
            if args.cmd != "ingress-replay" else None
    bodies: dict[str, Callable[[App], Awaitable[int]]] = {
        "run": lambda app: _run(app, args),
        "replay": lambda app: _replay(app, args.file, args.json),
        "demo": lambda app: _demo(app, args.json),
        "summary": lambda app: _summary(app, args.fixture, args.json),
        "report": lambda app: _report(app, args.fixture, args.pdf, args.out),
        "fixtures": lambda app: _fixtures(app, args.json),
        "export": lambda app: _export(app, args),
        "pack": lambda app: _pack(app, args),
        "stewards": lambda app: _stewards(app, args),
        "martyns-law": lambda app: _martyns_law(app, args),
        "season": lambda app: _season(app, args.club, args.season, args.json),
        "web-link": lambda app: _web_link(app, args.by),
        "heads": lambda app: _heads(app, args.fixture),
        "ingress-replay": lambda app: _ingress_replay(app, args.file, args.fixture),
        "club": lambda app: _club(app, args),
    }
    try:
        return asyncio.run(_with_app(settings, bodies[args.cmd], clock,
                                     serving=args.cmd == "run", drill=drill,
                                     club=args.tenant, command=args.cmd))
    except StartupError as exc:
        return _fail(str(exc), 1)
    except FileNotFoundError as exc:
        return _fail(f"no such file: {exc.filename}", 1)
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # a last line of defence: one line, details in the log
        from bot.replay import ScriptError

        if isinstance(exc, ScriptError):
            return _fail(str(exc), 1)
        log.debug("matchday %s failed", args.cmd, exc_info=True)  # shown with -v only
        return _fail(f"{args.cmd} failed: {exc.__class__.__name__}: {exc}", 1)
    finally:
        if tmp is not None:
            tmp.cleanup()


if __name__ == "__main__":
    raise SystemExit(main())
