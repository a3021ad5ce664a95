"""The post-match map's pins (issue #37 item 10): the server draws them spread as the live map
does, so a severity-4 at one gate is never hidden under a severity-3 nearby; in the PDF they
stay inside the map, off its heading and caption."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET

from fpdf import FPDF

from bot.domain.groundmap import load_map, pin_layer
from bot.evidence.debrief.pdf import draw_map


def ground_map(core):
    ground = next(iter(core.grounds.values()))
    return load_map(core.settings.config_dir, ground)


def every_zone(gm) -> list[dict[str, object]]:
    """An open incident in every zone with a pin, S4 and S3 by turns."""
    return [{"id": f"INC-{k}", "location": z, "severity": 4 - k % 2, "status": "reported",
             "closed": False} for k, z in enumerate(sorted(gm.pins))]


def test_post_match_pins_do_not_cover_each_other(core) -> None:
    gm = ground_map(core)
    svg = ET.fromstring(f"<g>{pin_layer(gm, every_zone(gm), open_only=False)}</g>")
    pins = []
    for g in svg.findall("g"):
        text = g.find("text[@class='sevn']")
        assert text is not None
        worst = int(text.text or 0)
        reach = (38 if worst >= 4 else 28) + 2  # a diamond's corners reach furthest
        pins.append((g.get("data-zone"), float(text.get("x")), float(text.get("y")) - 9, reach))
    assert len(pins) == len(every_zone(gm)) > 10
    covered = [(a[0], b[0]) for i, a in enumerate(pins) for b in pins[i + 1:]
               if math.hypot(a[1] - b[1], a[2] - b[2]) < a[3] + b[3] - 1.5]
    assert covered == []


class Recording(FPDF):
    """A real PDF that also keeps where each pin's circle went."""

    def __init__(self) -> None:
        super().__init__()
        self.circles: list[tuple[float, float, float]] = []

    def circle(self, x, y, radius, style=None):  # noqa: ANN001, ANN201 (fpdf2's signature)
        self.circles.append((x, y, radius))
        return super().circle(x, y, radius, style=style)


def test_pdf_pins_stay_inside_the_map_off_its_heading_and_caption(core) -> None:
    gm = ground_map(core)
    pdf = Recording()
    pdf.add_page()
    pdf.set_font("Helvetica", "B", 11)
    pdf.cell(80, 6, "Where the incidents were", new_x="LMARGIN", new_y="NEXT")
    heading_bottom = pdf.get_y()
    width = 80.0
    incidents = [(i["location"], int(i["severity"])) for i in every_zone(gm)]
    draw_map(pdf, gm, incidents, width)
    _, _, vw, vh = gm.viewbox
    caption_top = heading_bottom + 2 + vh * width / vw + 5
    assert len(pdf.circles) == len(incidents)
    for x, y, r in pdf.circles:
        assert y - r >= heading_bottom, (x, y)  # not over the heading
        assert y + r + 3.8 <= caption_top, (x, y)  # nor its count over the caption
        assert pdf.l_margin - 0.01 <= x - r and x + r <= pdf.l_margin + width + 0.01
