"""What a control-room screen shows, measured in the page (JavaScript function bodies for a
WebDriver's execute): shared by the browser tests and bench/web.py, so both measure alike."""

from __future__ import annotations

# Every card on screen, with any of its id, severity and place that is cut, hidden or missing.
CARDS_WHOLE = """
const vw = innerWidth, vh = innerHeight;
const inside = (r, box) => r.left >= box.left - 1 && r.right <= box.right + 1 &&
  r.top >= box.top - 1 && r.bottom <= box.bottom + 1;
const out = {cards: 0, cut: [], ids: []};
for (const li of document.querySelectorAll('.col li.card')) {
  const r = li.getBoundingClientRect();
  const ol = li.closest('ol').getBoundingClientRect();
  if (r.width === 0 || r.bottom > vh || r.right > vw || r.top < 0 || r.top >= ol.bottom) continue;
  out.cards++;
  out.ids.push(li.dataset.id);
  const want = {'.id': li.dataset.id, '.badge': 'S' + li.dataset.sev, '.where': null};
  for (const [css, text] of Object.entries(want)) {
    const el = li.querySelector(css);
    const er = el ? el.getBoundingClientRect() : null;
    const bad = !el || !el.textContent.trim() || (text !== null && el.textContent !== text) ||
      el.scrollWidth > el.clientWidth + 1 || !inside(er, r) || !inside(er, ol) ||
      getComputedStyle(el).visibility === 'hidden' || er.width === 0;
    if (bad) out.cut.push(li.dataset.id + ' ' + css);
  }
}
return out;
"""

# The smallest font size (px) of any text on screen.
MIN_TEXT_PX = """
const vw = innerWidth, vh = innerHeight;
let min = Infinity, where = '';
const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
for (let n = walk.nextNode(); n; n = walk.nextNode()) {
  if (!n.textContent.trim()) continue;
  const el = n.parentElement;
  if (!el || el.closest('script, style, template, title')) continue;
  const range = document.createRange();
  range.selectNodeContents(n);
  const rects = [...range.getClientRects()].filter((r) => r.width > 0 && r.height > 0 &&
    r.bottom > 0 && r.right > 0 && r.top < vh && r.left < vw);
  if (!rects.length || getComputedStyle(el).visibility === 'hidden') continue;
  const px = parseFloat(getComputedStyle(el).fontSize);
  if (px < min) {
    min = px;
    where = el.tagName + '.' + el.className + ': ' + n.textContent.trim().slice(0, 30);
  }
}
return {min, where};
"""

# What has the keyboard focus: its tag, incident and action (or id).
FOCUS = """
const a = document.activeElement;
if (!a || a === document.body) return '';
return [a.tagName, a.dataset.incident || a.dataset.id || a.id || '', a.dataset.action || '']
  .join(' ');
"""

# The banner's alert set: the rows drawn and the count of the rest.
ALERTS = """
const rows = [...document.querySelectorAll('#alerts .alert[data-id]')].map((e) => e.dataset.id);
const more = document.querySelector('#alerts [data-more]');
const n = more ? Number(more.dataset.more) : 0;
return {rows, more: n, total: rows.length + n};
"""
