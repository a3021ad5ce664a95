"""Slack modals for /incident, /arrest and /ban: build the view, read the submission back
into the one-line command of DESIGN.md, and place a refusal on the field it is about."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from slack_sdk.models.blocks import (
    Block,
    InputBlock,
    MarkdownTextObject,
    NumberInputElement,
    Option,
    OptionGroup,
    PlainTextInputElement,
    PlainTextObject,
    RadioButtonsElement,
    SectionBlock,
    StaticSelectElement,
)
from slack_sdk.models.views import View

from bot.adapters.slack.blocks import escape
from bot.domain.grounds import Ground
from bot.domain.vocab import (
    AFFILIATIONS,
    BAN_STATUSES,
    BAN_TYPES,
    INCIDENT_TYPES,
    OFFENCES,
    OUTCOMES,
    PLACES,
    SEVERITIES,
    SUPPORTER_SIDES,
    Vocabulary,
)

ACTION = "v"  # every input's action_id; the block_id names the field
ZONE_KIND_LABELS = {"stand": "Stands", "blocks": "Blocks", "walkway": "Walkways",
                    "concourse": "Concourses", "gate": "Gates", "segregation": "Segregation",
                    "perimeter": "Pitch perimeter", "outside": "Outside the ground"}
# The spaces belong to "inc": "(?:inc-?)?\s*\d" searched a long blank line in quadratic time.
INC_RE = re.compile(r"(?:inc-?\s*)?(\d{1,6})", re.IGNORECASE)
MAJOR = 5  # the severity whose report needs a confirm step (as the Telegram guided form)
CONFIRM_CALLBACK = "md_incident_confirm"
METADATA_MAX = 3000  # Slack's limit on private_metadata


class FormError(Exception):
    """Field-level problems found before the core is asked: block_id -> message."""

    def __init__(self, errors: dict[str, str]) -> None:
        super().__init__("; ".join(errors.values()))
        self.errors = errors


def _opt(value: str, label: str) -> Option:
    return Option(value=value, label=label[:75])


def _vocab_options(v: Vocabulary) -> list[Option]:
    return [_opt(k, v.label(k)) for k in v.keys()]


def _select(block_id: str, label: str, options: list[Option] | None = None, *,
            groups: list[OptionGroup] | None = None, optional: bool = False,
            placeholder: str = "Choose…") -> InputBlock:
    element = StaticSelectElement(action_id=ACTION, placeholder=placeholder,
                                  options=options, option_groups=groups)
    return InputBlock(block_id=block_id, label=label, element=element, optional=optional)


def _radio(block_id: str, label: str, options: list[Option], optional: bool = True) -> InputBlock:
    return InputBlock(block_id=block_id, label=label, optional=optional,
                      element=RadioButtonsElement(action_id=ACTION, options=options))


def _text(block_id: str, label: str, *, multiline: bool = False, optional: bool = True,
          placeholder: str = "", max_length: int = 200) -> InputBlock:
    element = PlainTextInputElement(action_id=ACTION, multiline=multiline, max_length=max_length,
                                    placeholder=placeholder or None)
    return InputBlock(block_id=block_id, label=label, element=element, optional=optional)


def _number(block_id: str, label: str, *, minimum: int, maximum: int,
            optional: bool = True) -> InputBlock:
    element = NumberInputElement(action_id=ACTION, is_decimal_allowed=False,
                                 min_value=str(minimum), max_value=str(maximum))
    return InputBlock(block_id=block_id, label=label, element=element, optional=optional)


def zone_groups(ground: Ground) -> list[OptionGroup]:
    """A ground's zones as option groups by kind (each group at most 100 options)."""
    by_kind: dict[str, list[Option]] = {}
    for z in ground.zones.values():
        by_kind.setdefault(z.kind, []).append(_opt(z.id, z.name))
    return [OptionGroup(label=ZONE_KIND_LABELS.get(k, k.replace("_", " ").title())[:75],
                        options=opts[:100]) for k, opts in list(by_kind.items())[:100]]


def values(view: dict[str, Any]) -> dict[str, str]:
    """block_id -> the submitted value as text ('' when left empty)."""
    out: dict[str, str] = {}
    for block_id, actions in view.get("state", {}).get("values", {}).items():
        state = actions.get(ACTION) or next(iter(actions.values()), {})
        sel = state.get("selected_option")
        if sel:
            out[block_id] = str(sel.get("value", ""))
        else:
            out[block_id] = str(state.get("value") or "").strip()
    return out


def _one_word(v: dict[str, str], block_id: str, what: str, errors: dict[str, str]) -> str:
    word = v.get(block_id, "")
    if word and re.search(r"\s", word):
        errors[block_id] = f"{what} must be one word, without spaces."
    return word


def _incident_link(v: dict[str, str], errors: dict[str, str]) -> str:
    raw = v.get("inc", "")
    if not raw:
        return ""
    m = INC_RE.fullmatch(raw.strip())
    if not m:
        errors["inc"] = "An incident id like INC-7 or 7."
        return ""
    return m.group(1)


@dataclass(frozen=True)
class Modal:
    """One modal: how to build it, how to read it back, where refusals belong."""

    callback_id: str
    command: str
    title: str
    submit: str
    blocks: Callable[[Ground], list[Block]]
    to_command: Callable[[dict[str, str]], str]
    fields: tuple[str, ...]  # block ids, named as the command's fields (UsageError.field)

    def view(self, ground: Ground, metadata: dict[str, str]) -> dict[str, Any]:
        """The modal as a validated view dict for views.open."""
        return View(type="modal", callback_id=self.callback_id,
                    title=PlainTextObject(text=self.title[:24]),
                    submit=PlainTextObject(text=self.submit[:24]),
                    close=PlainTextObject(text="Cancel"),
                    private_metadata=json.dumps(metadata)[:3000],
                    blocks=self.blocks(ground)).to_dict()

    @property
    def first_field(self) -> str:
        """The block an error belongs on when it is about no field in particular."""
        return self.fields[0]

    def block_for(self, field: str) -> str:
        """The block showing a field the core refused (Reply.field); the first otherwise."""
        return field if field in self.fields else self.first_field


# ---------------------------------------------------------------- /incident
def _incident_blocks(ground: Ground) -> list[Block]:
    return [
        _select("type", "What is happening", _vocab_options(INCIDENT_TYPES)),
        _select("location", f"Where ({ground.name})"[:2000], groups=zone_groups(ground)),
        _select("severity", "Severity (default depends on the type)",
                [_opt(str(k), v) for k, v in SEVERITIES.items()], optional=True),
        _text("description", "What you see", multiline=True, max_length=1500),
        _radio("affiliation", "Whose fans", _vocab_options(AFFILIATIONS)),
        _number("people", "About how many people", minimum=0, maximum=999999),
    ]


def _incident_command(v: dict[str, str]) -> str:
    errors: dict[str, str] = {}
    if not v.get("type"):
        errors["type"] = "Choose a type."
    if not v.get("location"):
        errors["location"] = "Choose a location."
    people = v.get("people", "")
    if people and not people.isdigit():
        errors["people"] = "A whole number."
    if errors:
        raise FormError(errors)
    parts = [f"/incident {v['type']} @{v['location']}"]
    if v.get("severity"):
        parts.append(f"s{v['severity']}")
    if v.get("affiliation") and v["affiliation"] != "unknown":
        parts.append(f"aff={v['affiliation']}")
    if people:
        parts.append(f"people={people}")
    if v.get("description"):
        parts.append(" ".join(v["description"].split()))
    return " ".join(parts)


INCIDENT = Modal(
    "md_incident", "incident", "Report an incident", "Log it", _incident_blocks,
    _incident_command,
    ("type", "location", "severity", "affiliation", "people", "description"),
)


# ---------------------------------------------------------------- /arrest
def _arrest_blocks(ground: Ground) -> list[Block]:
    return [
        _select("offence", "Offence (Home Office category)", _vocab_options(OFFENCES)),
        _number("count", "How many arrests", minimum=1, maximum=200),
        _radio("place", "Where", _vocab_options(PLACES), optional=False),
        _radio("side", "Supporters", _vocab_options(SUPPORTER_SIDES), optional=False),
        _text("ref", "Custody / occurrence reference (no names)", max_length=60),
        _text("inc", "Linked incident (e.g. INC-7)", max_length=12),
        _select("zone", "Zone", groups=zone_groups(ground), optional=True),
        _select("outcome", "Outcome", _vocab_options(OUTCOMES), optional=True),
    ]


def _arrest_command(v: dict[str, str]) -> str:
    errors: dict[str, str] = {}
    if not v.get("offence"):
        errors["offence"] = "Choose an offence."
    ref = _one_word(v, "ref", "The reference", errors)
    inc = _incident_link(v, errors)
    if errors:
        raise FormError(errors)
    parts = [f"/arrest {v['offence']}"]
    if v.get("count") and v["count"] != "1":
        parts.append(f"x{v['count']}")
    parts += [v[k] for k in ("place", "side") if v.get(k)]
    parts += [f"{k}={x}" for k, x in (("ref", ref), ("inc", inc), ("zone", v.get("zone", "")),
                                     ("outcome", v.get("outcome", ""))) if x]
    return " ".join(parts)


ARREST = Modal(
    "md_arrest", "arrest", "Record an arrest", "Record", _arrest_blocks, _arrest_command,
    ("offence", "count", "place", "side", "ref", "inc", "zone", "outcome"),
)


# ---------------------------------------------------------------- /ban
def _ban_blocks(ground: Ground) -> list[Block]:
    return [
        _select("type", "Type of ban", _vocab_options(BAN_TYPES)),
        _number("count", "How many people", minimum=1, maximum=200),
        _number("years", "Years (when fixed)", minimum=1, maximum=99),
        _select("status", "Status", _vocab_options(BAN_STATUSES), optional=True,
                placeholder="Proposed"),
        _radio("side", "Whose supporters (default home)", _vocab_options(SUPPORTER_SIDES)),
        _text("ref", "Reference (no names)", max_length=60),
        _text("inc", "Linked incident (e.g. INC-7)", max_length=12),
        _text("club", "Club (when not obvious)", max_length=60),
    ]


def _ban_command(v: dict[str, str]) -> str:
    errors: dict[str, str] = {}
    if not v.get("type"):
        errors["type"] = "Choose a type of ban."
    ref = _one_word(v, "ref", "The reference", errors)
    club = "_".join(v.get("club", "").split())
    inc = _incident_link(v, errors)
    if errors:
        raise FormError(errors)
    parts = [f"/ban {v['type']}"]
    if v.get("count") and v["count"] != "1":
        parts.append(f"x{v['count']}")
    if v.get("side"):
        parts.append(v["side"])
    parts += [f"{k}={x}" for k, x in (("years", v.get("years", "")),
                                     ("status", v.get("status", "")), ("ref", ref),
                                     ("inc", inc), ("club", club)) if x]
    return " ".join(parts)


BAN = Modal(
    "md_ban", "ban", "Record a banning order", "Record", _ban_blocks, _ban_command,
    ("type", "count", "years", "status", "side", "ref", "inc", "club"),
)



# ---------------------------------------------------------------- severity 5: confirm first
def needs_confirm(modal: Modal, v: dict[str, str]) -> bool:
    """A major incident (severity 5) from the incident modal is logged only once confirmed."""
    return modal is INCIDENT and v.get("severity") == str(MAJOR)


def _option_label(view: dict[str, Any], block_id: str, value: str) -> str:
    """The label the modal showed for a selected option (its value when not found)."""
    for block in view.get("blocks", []):
        if block.get("block_id") != block_id:
            continue
        element = block.get("element", {})
        groups = element.get("option_groups") or [{"options": element.get("options") or []}]
        for opt in (o for g in groups for o in g.get("options", [])):
            if opt.get("value") == value:
                return str(opt.get("text", {}).get("text") or value)
    return value


def confirm_view(view: dict[str, Any], v: dict[str, str], text: str,
                 metadata: dict[str, Any]) -> dict[str, Any] | None:
    """The step that replaces the form before a severity-5 report is logged: Confirm logs
    `text` (carried in private_metadata), Cancel closes it with nothing logged. None when the
    report is too long to carry."""
    carried = json.dumps({**metadata, "text": text}, ensure_ascii=False)
    if len(carried) > METADATA_MAX:
        return None
    what = escape(INCIDENT_TYPES.label(v["type"]))
    where = escape(_option_label(view, "location", v["location"]))
    body = (f"*Declare {what} at {where} a MAJOR INCIDENT (severity {MAJOR})?*\n"
            "Command, control and police are alerted at once and you will be asked for "
            "METHANE. Cancel logs nothing: report again with a lower severity if it is not "
            "a major incident.")
    return View(type="modal", callback_id=CONFIRM_CALLBACK,
                title=PlainTextObject(text="Major incident?"),
                submit=PlainTextObject(text="Yes, declare it"),
                close=PlainTextObject(text="Cancel"), private_metadata=carried,
                blocks=[SectionBlock(text=MarkdownTextObject(text=body))]).to_dict()


MODALS: dict[str, Modal] = {m.command: m for m in (INCIDENT, ARREST, BAN)}
BY_CALLBACK: dict[str, Modal] = {m.callback_id: m for m in MODALS.values()}
