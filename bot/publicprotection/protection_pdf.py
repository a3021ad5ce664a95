"""The Martyn's Law document as an A4 PDF: who holds the duty, the revision and when it is
due with the regulator, each procedure with its standing instruction and the ground's
arrangements, each measure by the Act's four kinds, and the drill log per procedure."""

from __future__ import annotations

from datetime import tzinfo

from bot.domain.clock import parse_iso
from bot.evidence.pdf_parts import Page
from bot.publicprotection.protection_document import ProtectionDocument
from bot.publicprotection.protection_plan import MEASURE_KINDS


def _secs(s: int | None) -> str:
    if s is None:
        return "-"
    return f"{s}s" if s < 60 else f"{s // 60}m{s % 60:02d}"


def protection_pdf(doc: ProtectionDocument, public_key: str, zone_label: dict[str, str],
                   tz: tzinfo) -> tuple[bytes, int]:
    """The document as an A4 PDF, and its page count."""
    plan = doc.plan

    def places(zones: tuple[str, ...]) -> str:
        return ", ".join(zone_label.get(z, z) for z in zones)

    page = Page("Public protection procedures and measures",
                f"{plan.ground_name} - revision {doc.revision}")
    page.para(f"Terrorism (Protection of Premises) Act 2025: the document an {plan.tier}-tier "
              f"premises keeps (s.7). Responsible person: {plan.responsible}. Capacity: "
              f"{plan.capacity:,}. Regulator: {plan.regulator}.")
    sent = (f"sent to the regulator {parse_iso(doc.sent_at).astimezone(tz):%d %b %Y}"
            if doc.sent_at else "not yet recorded as sent to the regulator")
    revised = parse_iso(doc.revised_at).astimezone(tz)
    page.para(f"Revision {doc.revision}, revised {revised:%d %b %Y %H:%M}; to be sent to the "
              f"regulator by {doc.due.astimezone(tz):%d %b %Y} "
              f"(within 30 days of the revision); {sent}. Generated "
              f"{doc.generated.astimezone(tz):%d %b %Y %H:%M %Z}.")
    page.para(f"Content hash (the revision number moves only when it changes): "
              f"{doc.content_hash}", mono=True)
    page.signed_by(public_key)

    page.heading("Public protection procedures")
    page.table((26, 62, 94), ("Procedure", "Standing instruction to every steward",
                              "Arrangements at this ground"),
               [(p.title, p.instruction, p.detail + (f" Zones: {places(p.zones)}."
                                                     if p.zones else ""))
                for p in plan.procedures])

    page.heading("Public protection measures")
    for kind, label in MEASURE_KINDS.items():
        mine = [m for m in plan.measures if m.kind == kind]
        page.heading(label, 10.5)
        if not mine:
            page.para("None recorded.")
            continue
        page.table((60, 122), ("Measure", "Detail"),
                   [(m.title, m.detail + (f" Zones: {places(m.zones)}." if m.zones else ""))
                    for m in mine])

    page.heading("Drill log (evidence)")
    if not doc.drills:
        page.para("No procedure has been sent in a drill at this ground yet.")
    for p in plan.procedures if doc.drills else ():
        rows = [d for d in doc.drills if d.procedure == p.key]
        if not rows:
            page.para(f"{p.title}: not drilled.")
            continue
        page.heading(p.title, 10.5)
        page.table((38, 30, 40, 34, 40), ("Drill", "Sent", "Sent to; reached, last at",
                                          "Have it: +1 min / +5 min / all",
                                          "Ack first / median / last"),
                   [(f"{parse_iso(d.at).astimezone(tz):%d %b %Y} {d.title}",
                     f"{parse_iso(d.at).astimezone(tz):%H:%M:%S} to {d.target}",
                     f"{d.sent} of {d.planned} ({d.reach_pct}%)"
                     + (f"; {d.unreached} radioed" if d.unreached else "")
                     + ("; reach not recorded" if d.delivered is None else
                        f"; reached {d.delivered}" + (f", last at +{_secs(d.last_reach_s)}"
                                                      if d.last_reach_s is not None else "")),
                     f"{d.acked_soon[0]} / {d.acked_soon[1]} / {d.acked} ({d.ack_pct}%)",
                     f"{_secs(d.first_ack_s)} / {_secs(d.median_ack_s)} / "
                     f"{_secs(d.last_ack_s)}") for d in rows])
        for d in rows:
            if d.not_reached:
                page.para(f"{parse_iso(d.at).astimezone(tz):%d %b %Y %H:%M:%S}: no delivery "
                          f"recorded to {', '.join(d.not_reached)}.")
    return page.done()
