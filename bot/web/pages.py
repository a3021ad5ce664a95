"""Server-rendered HTML of the control-room screens (every user string escaped)."""

from __future__ import annotations

import json
from html import escape
from typing import Any

from bot.domain.fixture.fixture_model import Fixture
from bot.domain.vocab import INCIDENT_TYPES, PHASES, PLACES, ROLES, STATUSES, SUPPORTER_SIDES
from bot.evidence.postmatch import Report

BOARD_COLUMNS = (("reported", "Reported"), ("acknowledged", "Acknowledged"),
                 ("dispatched", "Dispatched"), ("on_scene", "On scene"),
                 ("contained", "Contained / police"))


ROOT = "/control/"  # the control room's own path on a one-club deployment


def _doc(title: str, body: str, *, head: str = "", cls: str = "", root: str = ROOT) -> str:
    # every link below is relative to `root` (<base>): a club's control room is served under
    # its own prefix (/c/<club>/control/) by the same pages and script
    return ("<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<base href=\"{escape(root)}\"><title>{escape(title)}</title>"
            "<link rel=\"stylesheet\" href=\"static/control.css\">"
            f"{head}</head><body class=\"{cls}\">{body}</body></html>")


def drill_badge(fx: Fixture) -> str:
    """The badge on every page of a drill's fixture, so nobody takes it for a live one."""
    return ("<span class=\"badge drill\" title=\"A replayed drill, not a live fixture\">"
            "DRILL</span> " if fx.drill else "")


def message_page(title: str, text: str, root: str = ROOT) -> str:
    """A plain page with one message (refusals, signed out)."""
    return _doc(title, f"<main class=\"message\"><h1>{escape(title)}</h1>"
                       f"<p>{escape(text)}</p></main>", cls="plain", root=root)


def link_page(action: str, name: str = "", role: str = "", root: str = ROOT) -> str:
    """The page a sign-in link opens: whose account it opens, and one button, so link
    previews cannot use the link up. Without a name (unknown, used or expired link) it says
    nothing about anyone: pressing the button tells why it is refused."""
    whose = (f"<p class=\"whose\">This one-time link signs this browser in as "
             f"<b><bdi>{escape(name)}</bdi></b> · {escape(ROLES.label(role))}.</p>"
             if name else "<p>This one-time link signs this browser in.</p>")
    return _doc("Sign in · Matchday control room",
                "<main class=\"message\"><h1>Matchday control room</h1>" + whose +
                f"<form method=\"post\" action=\"{escape(action)}\">"
                "<button type=\"submit\" id=\"signin\" class=\"big\">Sign in</button></form>"
                "</main>", cls="plain", root=root)


def signed_in_page(root: str = ROOT) -> str:
    """After sign-in: go on to the screen by a same-site navigation (SameSite=Strict cookies
    are not sent on the cross-site redirect a chat app's link would start)."""
    return _doc("Signed in", "<main class=\"message\"><h1>Signed in</h1>"
                "<p><a href=\"./\">Open the control room</a></p></main>",
                head=f"<meta http-equiv=\"refresh\" content=\"0;url={escape(root)}\">",
                cls="plain", root=root)


def _state_json(state: dict[str, Any]) -> str:
    return json.dumps(state, separators=(",", ":")).replace("<", "\\u003c")


def _options(pairs: list[tuple[str, str]]) -> str:
    return "".join(f"<option value=\"{escape(k)}\">{escape(v)}</option>" for k, v in pairs)


def live_page(fx: Fixture, ground_name: str, map_svg: str, chart_svg: str,
              state: dict[str, Any], csrf: str, root: str = ROOT) -> str:
    """The live screen: map, board, tiles, chart and log, kept live by control.js."""
    me = state["me"]
    zones = sorted(state["zones"].items(), key=lambda kv: kv[1]["label"])
    filters = (
        "<div class=\"filters\" role=\"group\" aria-label=\"Filter the log\">"
        "<select id=\"f-type\" aria-label=\"Type\"><option value=\"\">All types</option>"
        + _options([(k, INCIDENT_TYPES.label(k)) for k in INCIDENT_TYPES.keys()])
        + "<option value=\"arrest\">Arrests and bans</option><option value=\"fixture\">"
        "Phase and fixture</option></select>"
        "<select id=\"f-sev\" aria-label=\"Severity\"><option value=\"\">All severities</option>"
        + _options([(str(s), f"S{s}+") for s in range(2, 6)]) + "</select>"
        "<select id=\"f-zone\" aria-label=\"Zone\"><option value=\"\">All zones</option>"
        + _options([(k, v["label"]) for k, v in zones]) + "</select>"
        "<select id=\"f-status\" aria-label=\"Status\"><option value=\"\">Any status</option>"
        "<option value=\"open\">Open</option>"
        + _options([(k, STATUSES.label(k)) for k in STATUSES.keys()]) + "</select></div>")
    cols = [f"<div class=\"col\" data-status=\"{k}\"><h3>{escape(label)} "
            f"<span class=\"n\"></span></h3><ol></ol></div>" for k, label in BOARD_COLUMNS]
    # the unacknowledged column on the left, the columns in hand stacked on the right
    board = cols[0] + "<div class=\"inhand\">" + "".join(cols[1:]) + "</div>"
    body = (
        "<header class=\"top\">"
        f"<h1>{drill_badge(fx)}<span class=\"title\">{escape(fx.title)}</span> "
        f"<small>{escape(ground_name)} · cat "
        f"{escape(fx.category)}"
        "</small></h1>"
        f"<div class=\"phase\" id=\"phase\">{escape(PHASES.label(fx.phase))}</div>"
        "<div class=\"clock\" id=\"clock\"></div>"
        "<div class=\"live\" id=\"live\" role=\"status\" title=\"Live connection\">"
        "● connecting</div>"
        "<button type=\"button\" id=\"sound\" class=\"sound\" aria-pressed=\"false\" "
        "title=\"Sound for a new S4/S5 or an escalation\">Sound off</button>"
        "<button type=\"button\" id=\"wallmode\" class=\"sound\" aria-pressed=\"false\" "
        "title=\"Fewer, larger cards, readable at 3 m\">Wall mode</button>"
        f"<div class=\"me\"><bdi>{escape(me['name'] or me['who'])}</bdi> · "
        f"{escape(ROLES.label(me['role']))}</div>"
        "<nav>" + ("" if me["role"] == "steward" else  # a steward may not open it
                   f"<a href=\"post-match?fixture={escape(fx.id)}\">Post-match</a>")
        + (f"<a href=\"decisions?fixture={escape(fx.id)}\">Decision log</a>"
           if me.get("decisions") else "")
        + "<form method=\"post\" action=\"logout\" class=\"inline\">"
        f"<input type=\"hidden\" name=\"csrf\" value=\"{escape(csrf)}\">"
        f"<button type=\"submit\" title=\"Signed in as {escape(me['name'] or me['who'])} · "
        f"{escape(ROLES.label(me['role']))}\">Sign out</button></form></nav></header>"
        "<div id=\"notlive\" class=\"notlive\" role=\"alert\" hidden><b>NOT LIVE</b> since "
        "<span id=\"notlive-since\"></span> · this screen is not updating: what it shows may "
        "be out of date · reconnecting by itself</div>"
        "<div id=\"alerts\" class=\"alerts\" role=\"alert\" aria-label=\"Needs "
        "acknowledging\"></div>"
        "<a class=\"skip\" href=\"#board\">Skip to the board</a>"
        "<main class=\"grid\">"
        "<section class=\"panel map\" aria-label=\"Ground map\">"
        f"{map_svg}<div class=\"legend\">"
        + "".join(f"<span class=\"sev sev{s}\">S{s}</span>" for s in range(1, 6))
        + "<span class=\"pulse-key\">pin: worst severity (S5 octagon, S4 diamond) · "
        "small number: incidents tonight · pulsing: not yet acknowledged · faded: all "
        "closed</span></div>"
        "<div id=\"zone-panel\" class=\"zone-panel\" hidden><h3></h3><ul></ul>"
        "<button type=\"button\" class=\"close\">Close</button></div></section>"
        f"<section class=\"panel board\" id=\"board\" tabindex=\"-1\" "
        f"aria-label=\"Open incidents\"><h2>Board</h2>"
        f"<div class=\"cols\">{board}</div><div id=\"wall-line\" class=\"wall-line\">"
        "</div></section>"
        "<section class=\"panel tiles\" aria-label=\"Figures\" id=\"tiles\" tabindex=\"0\">"
        "</section>"
        f"<section class=\"panel log\" aria-label=\"Live log\"><h2>Log</h2>"
        f"<div id=\"warnline\" class=\"warnline\" role=\"status\" hidden></div>{filters}"
        "<ol id=\"log\" tabindex=\"0\" aria-label=\"Log lines, newest first\"></ol></section>"
        f"<section class=\"panel chart\" aria-label=\"Incidents per 5 minutes\">"
        f"<h2>Incidents per 5 minutes</h2><div id=\"chart\">{chart_svg}</div></section>"
        "</main>"
        f"<script type=\"application/json\" id=\"state\">{_state_json(state)}</script>"
        "<script src=\"static/control.js\" defer></script>")
    return _doc(f"{'DRILL · ' if fx.drill else ''}{fx.title} · control room", body,
                head=f"<meta name=\"csrf\" content=\"{escape(csrf)}\">", cls="wall", root=root)


def _rows(d: dict[str, int], label: Any) -> str:
    if not d:
        return "<tr><td colspan=\"2\">none</td></tr>"
    return "".join(f"<tr><td>{escape(str(label(k)))}</td><td class=\"num\">{v}</td></tr>"
                   for k, v in d.items())


def _incident_table(report: Report) -> str:
    """One row per incident, severity 5 to 1: times, place, outcome."""
    rows = "".join(
        f"<tr class=\"sev{r.severity}\"><td>{escape(r.id)}</td>"
        f"<td><span class=\"badge sev{r.severity}\">S{r.severity}</span></td>"
        f"<td>{escape(r.type)}</td><td>{escape(r.place)}</td><td class=\"num\">{r.reported}"
        f"</td><td class=\"num\">{r.acknowledged or '–'}</td><td class=\"num\">"
        f"{r.closed or '–'}</td><td>{escape(r.outcome)}</td></tr>" for r in report.rows)
    return ("<section class=\"incidents\"><h2>Incidents, severity 5 to 1</h2><table>"
            "<thead><tr><th>INC</th><th>Sev</th><th>Type</th><th>Place</th><th>Reported</th>"
            "<th>Acknowledged</th><th>Closed</th><th>Outcome</th></tr></thead><tbody>"
            + (rows or "<tr><td colspan=\"8\">No incidents.</td></tr>")
            + "</tbody></table></section>")


def post_match_page(fx: Fixture, ground_name: str, fig: dict[str, Any], map_svg: str,
                    chart_svg: str, police_view: bool, labels: dict[str, Any],
                    open_lines: list[str], report: Report | None = None,
                    root: str = ROOT) -> str:
    """The night on one or two printable A4 pages: when it was made and the export chain
    head, a row per incident, summary tables, chart and a light map."""
    inc, arr, ban, rt = fig["incidents"], fig["arrests"], fig["bans"], fig["response_times"]
    mm = labels["mmss"]
    sections = [
        "<section class=\"figures\"><h2>Incidents</h2><table>"
        f"<tr><th>Total</th><td class=\"num\">{inc['total']}</td></tr>"
        f"<tr><th>Open</th><td class=\"num\">{inc['open']}</td></tr>"
        f"<tr><th>Closed</th><td class=\"num\">{inc['closed']}</td></tr>"
        f"<tr><th>Ejections</th><td class=\"num\">{fig['ejections']}</td></tr>"
        f"<tr><th>Time to acknowledge</th><td>median {mm(rt['median_ack_s'])}, worst "
        f"{mm(rt['worst_ack_s'])}</td></tr>"
        f"<tr><th>Time to close</th><td>median {mm(rt['median_close_s'])}, worst "
        f"{mm(rt['worst_close_s'])}</td></tr></table>"
        "<h3>By type</h3><table>" + _rows(inc["by_type"], INCIDENT_TYPES.label) + "</table>"
        "<h3>By severity</h3><table>"
        + _rows({str(s): inc["by_severity"].get(str(s), 0) for s in range(5, 0, -1)},
                lambda k: f"S{k}")
        + "</table><h3>By phase</h3><table>" + _rows(inc["by_phase"], PHASES.label)
        + "</table><h3>By location</h3><table>" + _rows(inc["by_location"], labels["zone"])
        + "</table></section>",
    ]
    police = ("<section class=\"figures\"><h2>Arrests and banning orders</h2><table>"
              f"<tr><th>Arrests</th><td class=\"num\">{arr['total']}</td></tr>"
              + "".join(f"<tr><th>{escape(PLACES.label(k))}</th><td class=\"num\">{v}</td></tr>"
                        for k, v in arr["inside_outside"].items())
              + "".join(f"<tr><th>{escape(SUPPORTER_SIDES.label(k))} supporters</th>"
                        f"<td class=\"num\">{v}</td></tr>" for k, v in arr["home_away"].items())
              + f"<tr><th>Banning orders</th><td class=\"num\">{ban['total']}</td></tr></table>")
    if police_view:
        police += ("<h3>Arrests by offence</h3><table>"
                   + _rows(arr["by_offence"], labels["offence"]) + "</table>"
                   "<h3>Bans by type</h3><table>" + _rows(ban["by_type"], labels["ban"])
                   + "</table>")
    sections.append(police + "</section>")
    still = ("<p class=\"open\">Still open: "
             + ", ".join(f"<bdi>{escape(line)}</bdi>" for line in open_lines) + "</p>"
             if open_lines else "")
    body = (
        "<header class=\"print-head\">"
        f"<h1>{drill_badge(fx)}{escape(fx.title)}</h1>"
        f"<p>{escape(fx.competition.replace('_', ' '))} · "
        f"{escape(ground_name)} · kick-off {labels['kickoff']:%a %d %b %Y %H:%M} · category "
        f"{escape(fx.category)} · phase {escape(PHASES.label(fx.phase))}</p>"
        + (f"<p class=\"generated\">Generated {report.generated_at:%d %b %Y %H:%M:%S %Z} "
           f"from {report.events} logged events · export chain head "
           f"<code>{escape(report.chain_head)}</code></p>" if report else "")
        + "<nav class=\"no-print\"><a href=\"./\">Back to the live screen</a> · "
        "<button type=\"button\" id=\"print\">Print</button></nav></header>"
        f"<main class=\"post\">{still}"
        + (_incident_table(report) if report else "")
        + f"<div class=\"two\">{''.join(sections)}</div>"
        f"<section class=\"chart\"><h2>Incidents per 15 minutes by phase</h2>{chart_svg}"
        f"</section><section class=\"map\"><h2>Where</h2>{map_svg}</section></main>")
    return _doc(f"{'DRILL · ' if fx.drill else ''}{fx.title} · post-match", body,
                cls="postmatch", root=root,
                head="<script src=\"static/postmatch.js\" defer></script>")
