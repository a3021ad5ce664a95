// The live control-room screen: renders the state the server embedded, then applies each
// Server-Sent Event (one connection per screen; the browser resumes with Last-Event-ID).
(() => {
  "use strict";
  const state = JSON.parse(document.getElementById("state").textContent);
  const csrf = document.querySelector('meta[name="csrf"]').content;
  const incidents = state.incidents;
  // the page brings only what the first screen shows; the rest comes after the first paint
  let partial = !!state.partial;
  const touched = new Set();
  const zones = state.zones;
  const seen = new Set(state.log.map((e) => e.id));
  let log = state.log;
  let tiles = state.tiles;
  let delivery = state.delivery;  // per chat; null for stewards
  let stewarding = state.stewarding;  // posts per zone and acknowledgements; null for stewards
  let deliveryAt = performance.now();
  let offset = Date.parse(state.now) - Date.now();
  const SEV = {1: "#8d99ae", 2: "#2a9d8f", 3: "#e9c46a", 4: "#f4a261", 5: "#e63946"};
  const CARDS = 60;  // cards a column may draw; fewer when they do not fit (never a scroll)
  // board layouts, roomiest first: how many sub-columns the unacknowledged column takes, and
  // whether cards keep the reporter's words and details (a flashpoint needs the denser ones)
  // (the densest drop the age and type line: id, severity and place stay whole)
  const LAYOUTS = [{sub: 1, full: true}, {sub: 1, full: false}, {sub: 2, full: false},
                   {sub: 2, full: false, tight: true}, {sub: 3, full: false, tight: true}];
  // the wall mode: fewer, larger cards, readable at 3 m (?mode=wall, or its button)
  let wall = new URLSearchParams(location.search).get("mode") === "wall" ||
    localStorage.getItem("matchday.wall") === "on";
  let stale = false;  // not live: buttons are disabled until the screen is live again
  const COLUMNS = ["reported", "acknowledged", "dispatched", "on_scene", "contained"];
  const fmt = new Intl.DateTimeFormat("en-GB", {hour: "2-digit", minute: "2-digit",
                                                  timeZone: state.tz || undefined});
  const fmtS = new Intl.DateTimeFormat("en-GB", {hour: "2-digit", minute: "2-digit",
                                                   second: "2-digit", hourCycle: "h23",
                                                   timeZone: state.tz || undefined});
  const $ = (sel) => document.querySelector(sel);
  const esc = (s) => String(s == null ? "" : s).replace(/[&<>"']/g,
    (c) => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"}[c]));
  const now = () => Date.now() + offset;
  const column = (status) => (status === "handed_to_police" ? "contained" : status);

  function age(iso) {
    const s = Math.max(0, Math.round((now() - Date.parse(iso)) / 1000));
    if (s < 60) return s + "s";
    if (s < 3600) return Math.floor(s / 60) + "m" + String(s % 60).padStart(2, "0");
    return Math.floor(s / 3600) + "h" + String(Math.floor(s % 3600 / 60)).padStart(2, "0");
  }

  function open() {
    return Object.values(incidents).filter((i) => !i.closed);
  }

  function actionsFor(inc) {
    const may = new Set(state.me.actions);
    const out = [];
    if (may.has("ack") && inc.status === "reported") out.push(["ack", "Acknowledge"]);
    if (may.has("dispatch") && (inc.status === "reported" || inc.status === "acknowledged")) {
      out.push(["dispatch", "Dispatch"]);
    }
    if (may.has("resolve") && !inc.closed) out.push(["resolve", "Resolve"]);
    return out;
  }

  function button(inc, a, label, short) {
    return `<button type="button" class="act act-${a}" data-action="${a}" ` +
      `data-incident="${esc(inc.id)}" aria-label="${short || label} ${esc(inc.id)}` +
      `${short ? ` (${label.toLowerCase()})` : ""}" title="${label} ${esc(inc.id)}">` +
      `${short ? esc(short) : label}</button>`;
  }

  const SHORT = {ack: "Ack", dispatch: "Send", resolve: "Done"};
  function buttons(inc) {
    return actionsFor(inc).map(([a, label]) => button(inc, a, label)).join("");
  }

  // severity worst first, then the oldest: the card that matters is never below the fold
  const bySeverity = (a, b) => (b.severity - a.severity) ||
    a.reported_at.localeCompare(b.reported_at);

  function people(i) {
    return i.people ? `${i.people} ${i.people === "1" ? "person" : "people"}` : "";
  }

  // where the card is in the control chats: "delivered to control 21:06:14 (Slack) · queued
  // 40 s (Telegram, rate limit)", so nobody has to guess whether a message is pending
  function deliveryText(i, short) {
    const rows = i.delivery || [];
    if (!rows.length) return "";
    const since = (performance.now() - (i.deliveryAt || performance.now())) / 1000;
    const done = rows.filter((r) => r.at != null);
    const parts = [];
    if (done.length) {
      parts.push(`${short ? "✓ delivered" : "delivered to control"} ${fmtS.format(new Date(Math.min(...done.map((r) =>
        r.at))))} (${done.map((r) => r.platform).join(", ")})`);
    }
    for (const r of rows) {
      if (r.queued_s != null) {
        parts.push(`queued ${secs(r.queued_s + since)} (${r.platform}, ${r.why})`);
      } else if (r.digest) parts.push(`named in a digest (${r.platform})`);
      else if (r.sending) parts.push(`sending (${r.platform})`);
    }
    return parts.join(" · ");
  }

  // where a card is for control: "not yet seen by control" while no control chat shows it
  function unseen(i) {
    const rows = i.delivery || [];
    return rows.length > 0 && !rows.some((r) => r.at != null);
  }

  // a card: id, severity and place on lines that never cut them (a narrow card wraps the
  // place to its own line); the lesser fields (age, type, words) give way first. The age is
  // left empty here and stamped after (the HTML stays the same from second to second, so an
  // update keeps the node, and the focus in it).
  function card(i, oldest) {
    const cls = ["card", "sev" + i.severity];
    if (oldest) cls.push("oldest");
    if (unseen(i)) cls.push("unseen");
    const first = actionsFor(i)[0];
    const meta = [people(i), i.reporter_name ? `by ${esc(i.reporter_name)}` : "",
                  i.reports > 1 ? `${i.reports} reports` : ""].filter(Boolean);
    const title = [`${i.id} S${i.severity} ${i.type_label}`, i.location_label,
                   i.description || "", meta.join(" · ")].filter(Boolean).join("\n");
    return `<li class="${cls.join(" ")}" data-id="${esc(i.id)}" data-sev="${i.severity}" ` +
      `tabindex="0" title="${esc(title)}"><div class="txt">` +
      `<div class="l1"><b class="id">${esc(i.id)}</b><span class="badge sev${i.severity}">` +
      `S${i.severity}</span><span class="where">${esc(i.place || i.location_label)}</span>` +
      `</div><div class="l2"><span class="age" data-at="${esc(i.reported_at)}"></span>` +
      (i.escalated ? '<span class="esc">ESC</span>' : "") +
      `<span class="what">${esc(i.type_label)}</span></div>` +
      (unseen(i) ? '<div class="l2 unseen-line">⚠ not yet seen by control</div>' : "") +
      (i.description ? `<div class="l3 words">“${esc(i.description)}”</div>` : "") +
      (meta.length ? `<div class="l3 meta">${meta.map((m) => `<span>${m}</span>`)
        .join(" · ")}</div>` : "") +
      (i.delivery && i.delivery.length && !unseen(i) ? `<div class="l3 dlv${i.delivery.some(
        (r) => r.queued_s != null) ? " queued" : ""}">${esc(deliveryText(i, true))}</div>` : "") +
      (oldest ? '<div class="l3 flag">OLDEST UNACKED</div>' : "") + "</div>" +
      (first ? button(i, first[0], first[1], SHORT[first[0]]) : "") + "</li>";
  }

  // the ages of the nodes just made (the one-second tick keeps them all current)
  function stamp(node) {
    for (const el of node.querySelectorAll(".age")) el.textContent = age(el.dataset.at);
  }

  // Updates a list in place: nodes whose HTML did not change are kept (and the focus in
  // them); changed ones are replaced, moved ones moved; focus inside a replaced or moved
  // node is put back on its counterpart, inside a removed one on what took its place.
  function patch(parent, rows) {
    const active = document.activeElement;
    const had = active && active !== parent && parent.contains(active) ? active : null;
    let hadKey = null, hadAt = -1, hadSel = null;
    if (had) {
      const holder = [...parent.children].find((c) => c.contains(had));
      if (holder) {
        hadKey = holder.dataset.key;
        hadAt = [...parent.children].indexOf(holder);
        hadSel = had === holder ? null : selectorOf(had);
      }
    }
    const old = new Map();
    for (const el of [...parent.children]) {
      if (el.dataset.key != null) old.set(el.dataset.key, el); else el.remove();
    }
    const keep = new Set();
    rows.forEach(([key, html], k) => {
      let el = old.get(key);
      if (!el || el._html !== html) {
        const t = document.createElement("template");
        t.innerHTML = html;
        const fresh = t.content.firstElementChild;
        fresh.dataset.key = key;
        fresh._html = html;
        stamp(fresh);
        if (stale) for (const b of fresh.querySelectorAll("button.act")) b.disabled = true;
        if (el) el.replaceWith(fresh);
        el = fresh;
      }
      keep.add(el);
      const cur = parent.children[k];
      if (cur !== el) parent.insertBefore(el, cur || null);
    });
    for (const el of old.values()) if (!keep.has(el)) el.remove();
    while (parent.children.length > rows.length) parent.lastElementChild.remove();
    if (had && document.activeElement !== had) {
      if (had.isConnected) { had.focus({preventScroll: true}); return; }
      const holder = [...parent.children].find((c) => c.dataset.key === hadKey) ||
        parent.children[Math.min(hadAt, parent.children.length - 1)];
      const to = holder && ((hadSel && holder.querySelector(hadSel)) ||
                            (holder.tabIndex >= 0 ? holder : holder.querySelector("button")));
      if (to) to.focus({preventScroll: true});
    }
  }
  function selectorOf(el) {
    if (el.matches("button[data-action]")) return `button[data-action="${el.dataset.action}"]`;
    return el.tagName.toLowerCase();
  }

  // draws a column's cards, worst first, and counts (never scrolls) those that do not fit
  function fill(el, mine, count, oldest) {
    const ol = el.querySelector("ol");
    if (!count) {  // nothing to draw or count: no layout to measure
      patch(ol, []);
      return {shown: 0, mine, cut: false};
    }
    patch(ol, mine.slice(0, CARDS).map((i) => [i.id, card(i, i.id === oldest)]));
    const lis = [...ol.children];
    const limit = ol.getBoundingClientRect().bottom;
    let shown = lis.length;
    const over = (li) => li.getBoundingClientRect().bottom > limit + 0.5;
    if (count > shown || (lis.length && over(lis[lis.length - 1]))) {
      // room for the "+N more" line, which takes the last grid row
      ol.insertAdjacentHTML("beforeend", '<li class="more">+0 more · worst S5</li>');
      const moreLi = ol.lastElementChild;
      const cut = limit - moreLi.getBoundingClientRect().height - 4;
      shown = lis.findIndex((li) => li.getBoundingClientRect().bottom > cut);
      if (shown < 0) shown = lis.length;
      moreLi.remove();
    }
    let drop = lis.slice(shown);
    const held = drop.find((li) => li.contains(document.activeElement));
    if (held && shown > 0) {  // the card the operator is on stays, in the last place
      drop = drop.filter((li) => li !== held).concat([lis[shown - 1]]);
    }
    for (const li of drop) li.remove();
    const hidden = count - shown;
    if (hidden > 0) {
      // the worst severity among the cards not drawn
      const drawn = new Set([...ol.children].map((li) => li.dataset.key));
      const rest = mine.filter((i) => !drawn.has(i.id));
      const top = rest.length ? Math.max(...rest.map((i) => i.severity)) : null;
      ol.insertAdjacentHTML("beforeend", `<li class="more" data-hidden="${hidden}" ` +
        `data-worst="${top || ""}">+${hidden} more${top ? ` · worst S${top}` : ""}</li>`);
    }
    return {shown, mine, cut: clipped(lis.slice(0, shown))};
  }

  // whether any drawn card cuts its id, severity or place (that layout is then too dense)
  function clipped(lis) {
    for (const li of lis) {
      const box = li.querySelector(".txt").getBoundingClientRect();
      for (const el of li.querySelectorAll(".l1 > *")) {
        const r = el.getBoundingClientRect();
        if (el.scrollWidth > el.clientWidth + 1 || r.right > box.right + 1 || r.width === 0) {
          return true;
        }
      }
    }
    return false;
  }

  let layout = 0;
  let roomierSince = null;  // since when a roomier layout would do (hysteresis)
  const ROOMIER_MS = 20000;
  const inBoard = () => $(".board").contains(document.activeElement) &&
    document.activeElement !== $(".board");
  function renderBoard() {
    const items = open().sort(bySeverity);
    const board = $(".board");
    const cols = {};
    for (const col of COLUMNS) cols[col] = items.filter((i) => column(i.status) === col);
    const counts = {};
    for (const col of COLUMNS) {
      const mine = cols[col];
      counts[col] = partial ? Math.max(mine.length, state.columns[col] || 0) : mine.length;
      document.querySelector(`.col[data-status="${col}"] .n`).textContent =
        counts[col] ? counts[col] : "";
      // the columns in hand share their height by how many cards each has
      if (col !== "reported") {
        document.querySelector(`.col[data-status="${col}"]`).style.flex =
          counts[col] ? `${Math.min(counts[col], 8)} 1 0` : "0 0 auto";
      }
    }
    const urgent = cols.reported.filter((i) => i.severity >= 4).length;
    const first = cols.reported.reduce((o, i) => (!o || i.reported_at < o.reported_at ? i : o),
                                       null);
    const oldest = first ? first.id : "";
    const repCol = document.querySelector('.col[data-status="reported"]');
    if (wall || inBoard()) {
      // the operator is acting (or the wall shows its own big cards): nothing moves
      fill(repCol, cols.reported, counts.reported, oldest);
    } else {
      // the roomiest layout that shows every unacknowledged card, else every S4/S5 of them,
      // without cutting an id, a severity or a place; denser at once when needed, roomier
      // only after it has been enough for ROOMIER_MS (no flip-flopping at a threshold)
      let drawn = -1;
      const memo = {};
      const shownAt = (k) => {
        if (!(k in memo)) {
          const L = LAYOUTS[k];
          board.dataset.sub = L.sub;
          board.classList.toggle("compact", !L.full);
          board.classList.toggle("tight", !!L.tight);
          const got = fill(repCol, cols.reported, counts.reported, oldest);
          memo[k] = got.cut && L.sub > 1 ? -1 : got.shown;
          drawn = k;
        }
        return memo[k];
      };
      const last = LAYOUTS.length - 1;
      let best = 0;
      for (let k = 1; k <= last; k++) if (shownAt(k) > shownAt(best)) best = k;
      const need = shownAt(best) >= counts.reported ? counts.reported : urgent;
      let k = Math.min(layout, last);
      if (shownAt(k) < need) {  // denser now
        k = [...LAYOUTS.keys()].find((j) => j > k && shownAt(j) >= need) ?? best;
        roomierSince = null;
      } else if (k > 0 && shownAt(k - 1) >= need) {
        const t = performance.now();
        if (roomierSince === null) roomierSince = t;
        if (t - roomierSince >= ROOMIER_MS) { k--; roomierSince = null; }
      } else roomierSince = null;
      layout = k;
      if (drawn !== k) {
        const L = LAYOUTS[k];
        board.dataset.sub = L.sub;
        board.classList.toggle("compact", !L.full);
        board.classList.toggle("tight", !!L.tight);
        fill(repCol, cols.reported, counts.reported, oldest);
      }
    }
    for (const col of COLUMNS.slice(1)) {
      fill(document.querySelector(`.col[data-status="${col}"]`), cols[col], counts[col], "");
    }
    board.dataset.layout = String(layout);
    renderWallLine(counts, cols);
  }

  // a pin: its shape and number say the severity (S1-S5) without colour; the count sits beside
  function pin(zone, x, y, worst, cls, n) {
    const r = 26;
    const shape = worst >= 5
      ? `<polygon points="${[0, 1, 2, 3, 4, 5, 6, 7].map((k) => {
        const a = Math.PI / 8 + k * Math.PI / 4;
        return `${(x + r * 1.08 * Math.cos(a)).toFixed(1)},${(y + r * 1.08 * Math.sin(a)).toFixed(1)}`;
      }).join(" ")}" fill="${SEV[worst]}"/>`
      : worst === 4 ? `<rect x="${x - r}" y="${y - r}" width="${2 * r}" height="${2 * r}" ` +
        `rx="4" transform="rotate(45 ${x} ${y})" fill="${SEV[worst]}"/>`
        : `<circle cx="${x}" cy="${y}" r="${r}" fill="${SEV[worst]}"/>`;
    return `<g class="pin sev${worst}${cls}" data-zone="${esc(zone)}" aria-hidden="true">` +
      `<title>${esc((zones[zone] || {label: zone}).label)}: ${n} ` +
      `incident${n === 1 ? "" : "s"}, worst S${worst}</title>${shape}` +
      `<text class="sevn" x="${x}" y="${y + 9}">${worst}</text>` +
      `<g class="count"><circle cx="${x + 26}" cy="${y - 24}" r="15"/>` +
      `<text x="${x + 26}" y="${y - 17}">${n}</text></g></g>`;
  }

  // pins that would overlap are pushed apart (a few rounds of relaxation), so every number
  // and shape stays readable; each keeps as close to its zone as the others allow
  const reach = (p) => (p.worst >= 4 ? 38 : 28) + 2;  // a diamond's corners reach furthest
  function spread(points) {
    for (let round = 0; round < 12; round++) {
      let moved = false;
      for (let a = 0; a < points.length; a++) {
        for (let b = a + 1; b < points.length; b++) {
          const p = points[a], q = points[b];
          let dx = q.x - p.x, dy = q.y - p.y;
          let d = Math.hypot(dx, dy);
          const gap = reach(p) + reach(q);
          if (d >= gap) continue;
          if (d < 0.01) { dx = 1; dy = 0; d = 1; }  // same spot: side by side
          const push = (gap - d) / 2;
          p.x -= dx / d * push; p.y -= dy / d * push;
          q.x += dx / d * push; q.y += dy / d * push;
          moved = true;
        }
      }
      if (!moved) break;
    }
    return points;
  }

  // how many reports (joined ones count: they are the signal) each zone had in 15 minutes
  const HEAT_MS = 15 * 60 * 1000;
  function renderHeat() {
    const since = now() - HEAT_MS;
    const n = {};
    for (const e of log) {
      if ((e.kind === "incident.reported" || e.kind === "incident.merged") && e.location &&
          Date.parse(e.at) >= since) n[e.location] = (n[e.location] || 0) + 1;
    }
    // early warnings standing: shown until the log says cleared or dismissed (the fixture's
    // own events, so a replayed drill shows them as long as the night did)
    const standing = {};
    for (const e of [...log].sort((a, b) => Date.parse(a.at) - Date.parse(b.at))) {
      if (e.kind === "fixture.early_warning") standing[e.location] = e.zones || [e.location];
      if (e.kind === "fixture.early_warning_cleared") {
        for (const [z, area] of Object.entries(standing)) {
          if (z === e.location || area.includes(e.location)) delete standing[z];
        }
      }
    }
    const warned = new Set(Object.values(standing).flat());
    for (const el of document.querySelectorAll("svg.ground .zone[data-zone]")) {
      el.classList.toggle("warn", warned.has(el.dataset.zone));
      const k = n[el.dataset.zone] || 0;
      const level = k >= 5 ? 3 : k >= 2 ? 2 : k >= 1 ? 1 : 0;
      for (const h of [1, 2, 3]) el.classList.toggle("heat" + h, h === level);
      el.dataset.reports15 = String(k);
    }
  }

  function renderPins() {
    renderHeat();
    if (partial) return;  // the server drew tonight's pins; redrawn once all incidents are here
    const byZone = {};
    for (const i of Object.values(incidents)) {
      (byZone[i.location] = byZone[i.location] || []).push(i);
    }
    // a report that joined an incident elsewhere keeps a pin where it was seen
    const seen = {};
    for (const e of log) {
      if (e.kind === "incident.merged" && e.location && !byZone[e.location]) {
        (seen[e.location] = seen[e.location] || []).push(e);
      }
    }
    const pins = [];
    for (const [zone, list] of Object.entries(seen)) {
      const z = zones[zone];
      if (!z) continue;
      const worst = Math.max(...list.map((e) => e.severity || 1));
      pins.push({zone, x: z.pin[0], y: z.pin[1], worst, cls: " joined", n: list.length});
    }
    for (const [zone, list] of Object.entries(byZone)) {
      const z = zones[zone];
      if (!z) continue;
      const live = list.filter((i) => !i.closed);
      const worst = Math.max(...(live.length ? live : list).map((i) => i.severity));
      let cls = list.some((i) => i.status === "reported") ? " pulse" : "";
      if (!live.length) cls += " closed";
      pins.push({zone, x: z.pin[0], y: z.pin[1], worst, cls, n: list.length});
    }
    $("#pins").innerHTML = spread(pins).map((p) =>
      pin(p.zone, Math.round(p.x), Math.round(p.y), p.worst, p.cls, p.n)).join("");
  }

  function tile(label, value, extra) {
    return `<div class="tile"><div class="label">${esc(label)}</div>` +
      `<div class="value">${esc(value)}</div>${extra || ""}</div>`;
  }

  function list(obj) {
    const rows = Object.entries(obj || {});
    if (!rows.length) return "";
    return '<ul class="by">' + rows.map(([k, v]) => `<li>${esc(k)} <b>${v}</b></li>`).join("") +
      "</ul>";
  }

  function secs(s) {
    s = Math.round(s);
    return s < 120 ? s + " s" : Math.floor(s / 60) + " min";
  }

  // the control, command and police chats first (what the room must know reached them),
  // then the rest worst first; many other chats (stewards' DMs) are summed up in one line
  const KEY_CHATS = ["control", "command", "police"];
  const OTHER_ROWS = 3;
  function deliveryTile() {
    if (!delivery) return "";
    const since = (performance.now() - deliveryAt) / 1000;  // ages were as of the push
    const rank = (r) => {
      const k = KEY_CHATS.findIndex((a) => (r.name || "").split(", ").includes(a));
      return k < 0 ? KEY_CHATS.length : k;
    };
    const sorted = delivery.map((r, k) => [r, k])
      .sort(([a, i], [b, j]) => (rank(a) - rank(b)) || (i - j)).map(([r]) => r);
    const key = sorted.filter((r) => rank(r) < KEY_CHATS.length);
    const rest = sorted.filter((r) => rank(r) >= KEY_CHATS.length);
    const row = (r) => {
      const bits = [r.queued ? `<b>${r.queued} queued</b>` : "delivered"];
      if (r.oldest_s != null) bits.push(`oldest ${secs(r.oldest_s + since)}`);
      if (r.last_429_s != null) bits.push(`last 429 ${secs(r.last_429_s + since)} ago`);
      const cls = r.queued ? (r.oldest_s + since > 60 ? "bad" : "warn") : "ok";
      return `<li class="${cls}${rank(r) < KEY_CHATS.length ? " key" : ""}" ` +
        `data-chat="${esc(r.chat)}"><span class="chat">${esc(r.platform)} ` +
        `${esc(r.name || r.chat)}</span> ${bits.join(" · ")}</li>`;
    };
    const shown = key.concat(rest.slice(0, rest.length > OTHER_ROWS + 1 ? OTHER_ROWS : rest.length));
    const others = rest.slice(shown.length - key.length);
    const rows = shown.map(row);
    if (others.length) {
      const q = others.filter((r) => r.queued);
      rows.push(`<li class="${q.length ? "warn" : "ok"} others">${others.length} other chats: ` +
        `${q.length ? `<b>${q.length} with messages queued</b>` : "all delivered"}</li>`);
    }
    return '<div class="tile wide delivery"><div class="label">Delivery</div>' +
      `<ul class="by">${rows.join("") || "<li>No chat platform connected</li>"}</ul></div>`;
  }

  // turnstile counts: people in, and each stand's % full, pressure and forecast
  function ingressTile(g) {
    const rows = g.stands.map((s) => {
      const bad = s.pressure !== "ok" || s.late || s.pct >= 85;
      return `<li class="${bad ? "bad" : ""}">${esc(s.label)} <b>${s.pct}%</b> ` +
        `${s.rate}/min${s.pressure === "ok" ? "" : " · " + esc(s.pressure)} · ` +
        `${esc(s.forecast)}</li>`;
    });
    return `<div class="tile wide ingress"><div class="label">Ingress</div>` +
      `<div class="value">${g.inside.toLocaleString("en-GB")} in · ${g.pct}%</div>` +
      `<ul class="by">${rows.join("")}</ul></div>`;
  }

  // the stewarding plan: posts filled per zone, and who has the latest broadcast/procedure
  function stewardingTiles() {
    if (!stewarding) return [];
    const out = [];
    const p = stewarding.posts;
    if (p) {
      const mobile = p.mobile_needed ? `<div class="${p.mobile_short ? "bad" : "sub"}">` +
        `${p.mobile_short ? "⚠ SHORT: " : ""}mobile ${p.mobile_filled} of ` +
        `${p.mobile_needed} needed for ${p.attendance.toLocaleString("en-GB")} expected</div>`
        : "";
      out.push(tile("Posts filled", `${p.filled}/${p.planned}`, mobile).replace(
        'class="tile"', 'class="tile posts-tile"'));
    }
    for (const proc of stewarding.procedures || []) out.push(ackTile(proc, `proc-${proc.id}`));
    if (stewarding.ack) out.push(ackTile(stewarding.ack, "acks"));
    return out;
  }

  // one message's tile: who has it of the planned, who not yet, who the bot cannot reach
  function ackTile(a, id) {
    const when = fmt.format(new Date(Date.parse(a.at)));
    const not = a.not_yet.length ? `<div class="sub">not yet: ${a.not_yet.map(esc).join(", ")}` +
      `${a.more ? ` (+${a.more})` : ""}</div>` : (a.unreached.length ? "" :
      '<div class="sub">everyone has it</div>');
    const radio = a.unreached.length ? `<div class="bad">${a.unreached.length + a.unreached_more}` +
      ` not on the bot, radio them: ${a.unreached.map(esc).join(", ")}` +
      `${a.unreached_more ? ` (+${a.unreached_more})` : ""}</div>` : "";
    return `<div class="tile wide acks${a.procedure ? " procedure" : ""}" id="${esc(id)}" ` +
      `role="status" aria-live="polite"><div class="label">${esc(a.word)} ${esc(when)} · ` +
      `${esc(a.target)}</div><div class="value"><span class="have">${a.have}</span>/` +
      `<span class="sent">${a.sent}</span> have it</div>${radio}${not}</div>`;
  }

  function renderPosts() {
    const svg = document.querySelector("svg.ground");
    if (!svg || !stewarding) return;
    const byZone = stewarding.zones || {};
    for (const el of svg.querySelectorAll(".zone[data-zone]")) {
      const z = byZone[el.dataset.zone];
      for (const lvl of ["ok", "amber", "red"]) {
        el.classList.toggle("posts-" + lvl, !!z && z.level === lvl);
      }
    }
    let layer = svg.querySelector("#posts");
    if (!layer) {
      layer = document.createElementNS("http://www.w3.org/2000/svg", "g");
      layer.id = "posts";
      svg.insertBefore(layer, svg.querySelector("#pins"));
    }
    layer.innerHTML = Object.entries(byZone).filter(([zone]) => zones[zone]).map(([zone, z]) => {
      const [x, y] = zones[zone].pin;
      const text = z.label + (z.mobile ? ` · ${z.mobile}` : "");
      return `<text class="posts-label lvl-${esc(z.level)}" data-zone="${esc(zone)}" ` +
        `x="${Math.round(x)}" y="${Math.round(y) + 46}">${esc(text)}</text>`;
    }).join("");
  }

  function renderTiles() {
    const t = tiles;
    $("#phase").textContent = t.phase_label;
    // what the room needs first: open and not acknowledged, and whether control has them
    const out = [tile("Open", t.open, t.unacked ? `<div class="warn">${t.unacked} ` +
                      "not acknowledged</div>" : ""),
                 tile("Closed", t.closed), deliveryTile()];
    if ("arrests" in t) {
      out.push(tile("Arrests", t.arrests, `<div class="sub">inside ${t.arrests_inside} · ` +
                    `outside ${t.arrests_outside}</div>` + list(t.arrests_by_offence)));
      out.push(tile("Banning orders", t.bans, list(t.bans_by_type)));
    }
    if ("median_ack" in t) {
      out.push(tile("Time to acknowledge", t.median_ack,
                    `<div class="sub">median · worst ${esc(t.worst_ack)}</div>`));
    }
    if (t.ingress) out.push(ingressTile(t.ingress));
    out.push(...stewardingTiles());
    out.push(tile("Phase", t.phase_label));
    const el = $("#tiles"), top = el.scrollTop;
    patch(el, out.filter(Boolean).map((h, k) => [String(k), h]));
    el.scrollTop = top;
  }

  function matches(e) {
    const type = $("#f-type").value, sev = $("#f-sev").value;
    const zone = $("#f-zone").value, status = $("#f-status").value;
    if (type === "arrest" && !/^(arrest|ban)\./.test(e.kind)) return false;
    if (type === "fixture" && !e.kind.startsWith("fixture.")) return false;
    if (type && type !== "arrest" && type !== "fixture" && e.type !== type) return false;
    if (sev && !(e.severity >= Number(sev))) return false;
    if (zone && e.location !== zone) return false;
    if (status) {
      const inc = incidents[e.incident];
      if (!inc) return false;
      if (status === "open" ? inc.closed : inc.status !== status) return false;
    }
    return true;
  }

  function renderLog() {
    const rows = log.filter(matches).slice(0, 300);
    const el = $("#log");
    // a log scrolled back stays where it was while new lines arrive above
    const top = el.scrollTop;
    const anchor = top > 0 ? [...el.children].find((li) => li.offsetTop >= top) : null;
    const was = anchor ? anchor.offsetTop - top : 0;
    patch(el, rows.map((e) => [e.id,
      `<li class="ev k-${esc(e.kind.replace(".", "-"))}${e.severity ? " sev" + e.severity : ""}"` +
      ` data-id="${esc(e.id)}" title="${esc(e.who ? `${e.who}: ${e.what}` : e.what)}"><time>${fmt.format(new Date(e.at))}</time>` +
      `<span class="ph">${esc((e.phase || "").replace("_", " "))}</span>` +
      `<span class="who">${esc(e.who)}</span><span class="what">${esc(e.what)}</span></li>`]));
    if (anchor && anchor.isConnected) el.scrollTop = anchor.offsetTop - was;
    renderWarning();
  }

  // the newest early warning of the last 15 minutes stays above the log (its row scrolls away)
  function renderWarning() {
    const el = $("#warnline");
    if (!el) return;
    const since = now() - HEAT_MS;
    const w = log.find((e) => e.kind === "fixture.early_warning" && Date.parse(e.at) >= since);
    el.hidden = !w;
    if (w) el.textContent = `⚠ ${fmt.format(new Date(w.at))} ${w.what}`;
  }

  // the wall mode's own line: how many are in hand (their columns are not drawn there)
  function renderWallLine(counts) {
    const el = $("#wall-line");
    if (!el) return;
    const inHand = COLUMNS.slice(1).reduce((n, c) => n + (counts[c] || 0), 0);
    el.textContent = `${counts.reported || 0} not acknowledged · ${inHand} in hand`;
  }

  function setWall(on) {
    wall = on;
    localStorage.setItem("matchday.wall", on ? "on" : "off");
    document.body.classList.toggle("wallmode", on);
    const b = $("#wallmode");
    if (b) {
      b.setAttribute("aria-pressed", String(on));
      b.textContent = on ? "Leave wall mode" : "Wall mode";
    }
    layout = on ? 1 : 0;
    $(".board").dataset.sub = on ? "2" : "1";
    $(".board").classList.toggle("compact", on);
    $(".board").classList.toggle("tight", on);
    render();
  }

  function showZone(zone) {
    const panel = $("#zone-panel");
    const list = Object.values(incidents).filter((i) => i.location === zone)
      .sort((a, b) => b.reported_at.localeCompare(a.reported_at));
    panel.querySelector("h3").textContent = (zones[zone] || {label: zone}).label +
      ` · ${list.length} incident${list.length === 1 ? "" : "s"}`;
    panel.querySelector("ul").innerHTML = list.map((i) =>
      `<li class="sev${i.severity}"><b>${esc(i.id)}</b> S${i.severity} ${esc(i.type_label)} · ` +
      `${esc(i.status_label)} · ${fmt.format(new Date(i.reported_at))}` +
      (i.description ? `<div class="desc">${esc(i.description)}</div>` : "") + "</li>"
    ).join("") || "<li>No incidents here.</li>";
    panel.hidden = false;
  }

  // one incident, whole, with every button this member may press (from its card)
  function showIncident(id) {
    const i = incidents[id];
    if (!i) return;
    const panel = $("#zone-panel");
    panel.querySelector("h3").textContent = `${i.id} · S${i.severity} ${i.type_label}`;
    const meta = [people(i), i.reporter_name ? `reported by ${esc(i.reporter_name)}` : "",
                  i.reports > 1 ? `${i.reports} reports` : ""].filter(Boolean).join(" · ");
    panel.querySelector("ul").innerHTML = `<li class="sev${i.severity}">` +
      `${esc(i.location_label)} · ${esc(i.status_label)} · ` +
      `${fmt.format(new Date(i.reported_at))}` +
      (i.description ? `<div class="desc">“${esc(i.description)}”</div>` : "") +
      (meta ? `<div class="desc">${meta}</div>` : "") +
      (i.delivery && i.delivery.length ? `<div class="desc dlv">${esc(deliveryText(i))}</div>`
        : "") +
      `<div class="acts">${buttons(i)}</div></li>`;
    panel.hidden = false;
  }

  let pending = false;
  function render() {
    if (pending) return;
    pending = true;
    requestAnimationFrame(() => {
      pending = false;
      renderAlerts(); renderBoard(); renderPins(); renderTiles(); renderLog();
    });
  }

  let chartTimer = null;
  function refreshChart() {
    if (chartTimer) return;
    chartTimer = setTimeout(async () => {
      chartTimer = null;
      const r = await fetch(`chart.svg?fixture=${encodeURIComponent(state.fixture)}`,
                            {credentials: "same-origin"});
      if (r.ok) $("#chart").innerHTML = await r.text();
    }, 3000);
  }

  function apply(change) {
    const e = change.event;
    // a drill's night is on its replay's virtual clock: the screen's clock follows its events
    if (state.virtual && Date.parse(e.at) > now()) offset = Date.parse(e.at) - Date.now();
    if (change.incident) {
      const was = incidents[change.incident.id];
      if (was && was.delivery && !change.incident.delivery) {  // told apart ("seen" events)
        change.incident.delivery = was.delivery;
        change.incident.deliveryAt = was.deliveryAt;
      }
      incidents[change.incident.id] = change.incident;
      touched.add(change.incident.id);
    }
    if (change.tiles) tiles = change.tiles;
    if (!seen.has(e.id)) {
      seen.add(e.id);
      log.unshift(e);
      if (log.length > 2000) log = log.slice(0, 1500);
    }
    // a steward's chart is of their own reports: not on the feed, fetched
    if (state.me.role === "steward" && e.kind === "incident.reported") refreshChart();
    render();
  }

  // ---- live or not: a dead screen never looks live (banner, grey page, stopped counters)
  let notLiveSince = null;
  function setLive(on) {
    if (on) {
      notLiveSince = null;
      $("#live").className = "live on";
      $("#live").textContent = "● LIVE";
      $("#notlive").hidden = true;
      document.body.classList.remove("stale");
      if (stale) {
        stale = false;
        for (const b of document.querySelectorAll("button.act")) b.disabled = false;
      }
      return;
    }
    $("#live").className = "live off";
    $("#live").textContent = "● NOT LIVE";
    if (notLiveSince !== null) return;
    notLiveSince = now();
    $("#notlive-since").textContent = fmtS.format(new Date(notLiveSince));
    $("#notlive").hidden = false;
    document.body.classList.add("stale");
    // a press could not reach the bot: the buttons are disabled, not just greyed
    stale = true;
    for (const b of document.querySelectorAll("button.act")) b.disabled = true;
  }

  const WATCHDOG_MS = 40000;  // the server pings every 15 s: two missed pings are a dead line
  let source = null;
  let heard = performance.now();
  let retry = null;
  function connect() {
    if (retry) { clearTimeout(retry); retry = null; }
    if (source) source.close();
    // resumes after the last change this screen applied (the browser's own reconnects send
    // it as Last-Event-ID)
    const url = `events?fixture=${encodeURIComponent(state.fixture)}` +
      `&after=${encodeURIComponent(state.last)}`;
    const es = source = new EventSource(url);
    const hear = () => { heard = performance.now(); };
    es.addEventListener("change", (msg) => {
      hear();
      state.last = msg.lastEventId || state.last;
      apply(JSON.parse(msg.data));
    });
    es.addEventListener("ping", hear);
    // the chart is redrawn by the server once for all screens and pushed here
    es.addEventListener("chart", (msg) => {
      hear(); $("#chart").innerHTML = JSON.parse(msg.data).svg;
    });
    es.addEventListener("delivery", (msg) => {
      hear();
      delivery = JSON.parse(msg.data).rows;
      deliveryAt = performance.now();
      renderTiles();
    });
    // the turnstiles' figures move with no event logged: the server pushes the tile
    es.addEventListener("ingress", (msg) => {
      hear();
      tiles = Object.assign({}, tiles, {ingress: JSON.parse(msg.data)});
      renderTiles();
    });
    es.addEventListener("stewarding", (msg) => {
      hear();
      stewarding = JSON.parse(msg.data);
      renderPosts();
      renderTiles();
    });
    es.addEventListener("seen", (msg) => {
      hear();
      for (const [id, rows] of Object.entries(JSON.parse(msg.data).incidents)) {
        if (!incidents[id]) continue;
        incidents[id].delivery = rows;
        incidents[id].deliveryAt = performance.now();
      }
      render();
    });
    es.addEventListener("signout", () => { es.close(); location.reload(); });
    es.onopen = () => {
      hear();
      const was = notLiveSince !== null;
      setLive(true);
      if (was) { refreshChart(); refreshIncidents(); }  // what was pushed meanwhile is not replayed
    };
    es.onerror = () => {
      setLive(false);
      // a refused reconnection (an error answer) ends the EventSource: start a new one
      if (es.readyState === EventSource.CLOSED && source === es) {
        retry = setTimeout(connect, 2000);
      }
    };
  }

  async function refreshIncidents() {
    const r = await fetch(`incidents?fixture=${encodeURIComponent(state.fixture)}`,
                          {credentials: "same-origin"}).catch(() => null);
    if (!r || !r.ok) return;
    const body = await r.json();
    Object.assign(incidents, body.incidents);
    render();
  }

  // ---- alerts: a new S4/S5 or an escalation stays on screen until acknowledged
  let sound = localStorage.getItem("matchday.sound") === "on";
  let audio = null;
  function beep() {
    document.body.dataset.beeps = String(Number(document.body.dataset.beeps || 0) + 1);
    if (!audio) return;
    const o = audio.createOscillator(), g = audio.createGain();
    o.frequency.value = 880;
    g.gain.setValueAtTime(0.25, audio.currentTime);
    g.gain.exponentialRampToValueAtTime(0.001, audio.currentTime + 0.6);
    o.connect(g).connect(audio.destination);
    o.start(); o.stop(audio.currentTime + 0.6);
  }
  function renderSound() {
    const b = $("#sound");
    b.setAttribute("aria-pressed", String(sound));
    b.textContent = sound ? "Sound on" : "Sound off";
  }
  // the alert set is the server's (each incident says whether it is one, and why): every
  // screen shows the same ones, whatever it saw happen
  const alerted = new Set();
  function alertList() {
    return open().filter((i) => i.alert && i.status === "reported").sort(bySeverity);
  }
  function renderAlerts() {
    const list = alertList();
    for (const i of list) {
      if (!alerted.has(i.id)) {
        alerted.add(i.id);
        if (sound && started) beep();
      }
    }
    const total = partial ? Math.max(list.length, state.alerts || 0) : list.length;
    const el = $("#alerts");
    el.hidden = wall && !total;
    el.classList.toggle("on", total > 0);
    const may = state.me.actions.includes("ack");
    const room = wall ? 0 : innerHeight < 900 ? 1 : 2;  // the board keeps its height
    const more = total - Math.min(room, list.length);
    // the rest are counted on the last row (no line of its own: the board keeps its height)
    const rest = (k) => (more > 0 && k === Math.min(room, list.length) - 1
      ? `<span class="alert-more" data-more="${more}" title="S4/S5 or escalated, not ` +
        `acknowledged: on the board, worst first">+${more} more</span>` : "");
    const rows = list.slice(0, room).map((i, k) => [`${i.id}:${rest(k)}`,
      `<div class="alert sev${i.severity}" data-id="${esc(i.id)}">` +
      `<span class="badge sev${i.severity}">S${i.severity}</span> <b>${esc(i.alert)}</b> ` +
      `<span class="id">${esc(i.id)}</span> ` +
      `<span class="where">${esc(i.place || i.location_label)}</span>` +
      `<span class="what">· ${esc(i.type_label)}</span>` +
      (i.description ? ` <span class="words">“${esc(i.description)}”</span>` : "") +
      ` <span class="age" data-at="${esc(i.reported_at)}"></span>` + rest(k) +
      (may ? button(i, "ack", "Acknowledge") : '<span class="wait">waiting for control</span>') +
      "</div>"]);
    if (!total) {
      rows.push(["none", '<div class="none">Nothing waiting: no S4/S5 or escalation ' +
        "unacknowledged</div>"]);
    }
    patch(el, rows);
  }

  function pressId() {
    if (window.crypto && crypto.getRandomValues) {
      const b = new Uint8Array(12);
      crypto.getRandomValues(b);
      return Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
    }
    return String(Date.now()) + String(Math.random()).slice(2, 10);
  }

  function toast(text, ok) {
    const el = document.createElement("div");
    el.className = "toast" + (ok ? "" : " bad");
    el.setAttribute("role", "status");
    el.textContent = text;
    document.body.appendChild(el);
    setTimeout(() => el.remove(), 5000);
  }

  document.addEventListener("click", async (ev) => {
    const btn = ev.target.closest("button.act");
    if (btn) {
      btn.disabled = true;
      try {
        const r = await fetch(`action?fixture=${encodeURIComponent(state.fixture)}`, {
          method: "POST", credentials: "same-origin",
          headers: {"Content-Type": "application/json", "X-CSRF-Token": csrf},
          body: JSON.stringify({action: btn.dataset.action, incident: btn.dataset.incident,
                                id: pressId()})});
        const body = await r.json();
        toast(body.text, body.ok);
      } catch (err) {
        toast("Not sent: the bot is not answering. Try again.", false);
      } finally {
        btn.disabled = stale;
      }
      return;
    }
    if (ev.target.closest("#wallmode")) { setWall(!wall); return; }
    if (ev.target.closest("#sound")) {
      sound = !sound;
      localStorage.setItem("matchday.sound", sound ? "on" : "off");
      // made on a press: browsers let only a page the user touched play sound
      if (sound && !audio && window.AudioContext) audio = new AudioContext();
      renderSound();
      return;
    }
    const target = ev.target.closest("[data-zone]");
    if (target) { showZone(target.dataset.zone); return; }
    const c = ev.target.closest("li.card[data-id]");
    if (c) { showIncident(c.dataset.id); return; }
    if (ev.target.closest("#zone-panel .close")) $("#zone-panel").hidden = true;
  });
  document.addEventListener("keydown", (ev) => {
    // Escape closes the panel wherever the focus is (Firefox keeps it on a button pressed)
    if (ev.key === "Escape") { $("#zone-panel").hidden = true; return; }
    if (ev.target.closest && ev.target.closest("button")) return;  // buttons press themselves
    const z = ev.target.closest && ev.target.closest("[data-zone]");
    const c = ev.target.closest && ev.target.closest("li.card[data-id]");
    if ((z || c) && (ev.key === "Enter" || ev.key === " ")) {
      ev.preventDefault();
      if (z) showZone(z.dataset.zone); else showIncident(c.dataset.id);
    }
  });
  for (const id of ["#f-type", "#f-sev", "#f-zone", "#f-status"]) {
    $(id).addEventListener("change", renderLog);
  }
  setInterval(() => {
    document.body.dataset.ticks = String(Number(document.body.dataset.ticks || 0) + 1);
    if (source && performance.now() - heard > WATCHDOG_MS) { setLive(false); connect(); }
    if (notLiveSince !== null) return;  // a stale screen's clock and ages stop where it died
    if (Number(document.body.dataset.ticks) % 15 === 0) renderHeat();  // the 15 minutes move
    $("#clock").textContent = fmt.format(new Date(now()));
    for (const el of document.querySelectorAll(".age")) el.textContent = age(el.dataset.at);
    if (delivery && delivery.some((r) => r.queued || r.last_429_s != null)) renderTiles();
    if (Object.values(incidents).some((i) => !i.closed && i.delivery &&
                                         i.delivery.some((r) => r.queued_s != null))) {
      render();  // the queued seconds count on
    }
  }, 1000);
  $("#clock").textContent = fmt.format(new Date(now()));
  async function loadRest() {
    const r = await fetch(`incidents?fixture=${encodeURIComponent(state.fixture)}`,
                          {credentials: "same-origin"});
    if (!r.ok) { setTimeout(loadRest, 2000); return; }
    const body = await r.json();
    for (const [id, inc] of Object.entries(body.incidents)) {
      if (!touched.has(id)) incidents[id] = inc;  // what the live feed brought is newer
    }
    partial = false;
    for (const i of alertList()) alerted.add(i.id);  // there before this screen: no beep
    renderAlerts(); renderBoard(); renderPins(); renderTiles(); renderLog();
    // when every incident was drawn, in ms after the navigation started (bench/web.py)
    document.body.dataset.complete = String(Math.max(1, Math.round(performance.now())));
  }

  // What the server drew (header, map with tonight's pins, chart) is painted first; the
  // board, log and tiles right after that first frame: a cold screen on a busy machine shows
  // the night at once instead of waiting for every card's layout (a hidden tab gets no
  // frames: the timer starts it there).
  let started = false;
  function start() {
    if (started) return;
    started = true;
    for (const i of alertList()) alerted.add(i.id);  // not a new one: no beep
    renderSound();
    if (wall) setWall(true);
    renderAlerts(); renderBoard(); renderPins(); renderTiles(); renderLog(); renderPosts();
    document.body.dataset.ready = "1";
    connect();
    if (partial) requestAnimationFrame(() => setTimeout(loadRest, 0));
    else document.body.dataset.complete = String(Math.max(1, Math.round(performance.now())));
  }
  addEventListener("resize", () => { if (started) render(); });
  requestAnimationFrame(() => setTimeout(start, 0));
  setTimeout(start, 250);
})();
