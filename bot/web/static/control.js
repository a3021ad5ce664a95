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
  const LAYOUTS = [{sub: 1, full: true, wide: false}, {sub: 1, full: false, wide: false},
                   {sub: 2, full: false, wide: false}, {sub: 2, full: false, wide: true},
                   {sub: 3, full: false, wide: true}];
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

  function card(i, oldest) {
    const cls = ["card", "sev" + i.severity];
    if (oldest) cls.push("oldest");
    const first = actionsFor(i)[0];
    const meta = [people(i), i.reporter_name ? `by ${esc(i.reporter_name)}` : "",
                  i.reports > 1 ? `${i.reports} reports` : ""].filter(Boolean);
    const title = [`${i.id} S${i.severity} ${i.type_label}`, i.location_label,
                   i.description || "", meta.join(" · ")].filter(Boolean).join("\n");
    return `<li class="${cls.join(" ")}" data-id="${esc(i.id)}" data-sev="${i.severity}" ` +
      `tabindex="0" title="${esc(title)}"><div class="txt">` +
      `<div class="l1"><b class="id">${esc(i.id)}</b> <span class="badge sev${i.severity}">` +
      `S${i.severity}</span>${i.escalated ? ' <span class="esc">ESC</span>' : ""}` +
      ` <span class="age" data-at="${esc(i.reported_at)}">${age(i.reported_at)}</span></div>` +
      `<div class="l2"><span class="what">${esc(i.type_label)}</span> · ` +
      `<span class="where">${esc(i.place || i.location_label)}</span></div>` +
      (i.description ? `<div class="l3 words">“${esc(i.description)}”</div>` : "") +
      (meta.length ? `<div class="l3 meta">${meta.map((m) => `<span>${m}</span>`)
        .join(" · ")}</div>` : "") +
      (i.delivery && i.delivery.length ? `<div class="l3 dlv${i.delivery.some((r) =>
        r.queued_s != null) ? " queued" : ""}">${esc(deliveryText(i, true))}</div>` : "") +
      (oldest ? '<div class="l3 flag">OLDEST UNACKED</div>' : "") + "</div>" +
      (first ? button(i, first[0], first[1], SHORT[first[0]]) : "") + "</li>";
  }

  // draws each column's cards, worst first, and counts (never scrolls) those that do not fit
  function fill(el, mine, count, oldest) {
    const ol = el.querySelector("ol");
    if (!count) {  // nothing to draw or count: no layout to measure
      ol.textContent = "";
      return {shown: 0, mine};
    }
    ol.innerHTML = mine.slice(0, CARDS).map((i) => card(i, i.id === oldest)).join("");
    const lis = [...ol.children];
    const limit = ol.getBoundingClientRect().bottom;
    let shown = lis.length;
    const over = (li) => li.getBoundingClientRect().bottom > limit + 0.5;
    if (count > shown || (lis.length && over(lis[lis.length - 1]))) {
      // room for the "+N more" line, which takes the last grid row
      ol.insertAdjacentHTML("beforeend", '<li class="more">+0 more</li>');
      const moreLi = ol.lastElementChild;
      const cut = limit - moreLi.getBoundingClientRect().height - 4;
      shown = lis.findIndex((li) => li.getBoundingClientRect().bottom > cut);
      if (shown < 0) shown = lis.length;
      moreLi.remove();
    }
    for (const li of lis.slice(shown)) li.remove();
    const hidden = count - shown;
    if (hidden > 0) {
      // the worst severity among the cards not drawn (cards are drawn worst first)
      const rest = mine.slice(shown);
      const top = rest.length ? Math.max(...rest.map((i) => i.severity)) : null;
      ol.insertAdjacentHTML("beforeend", `<li class="more" data-hidden="${hidden}">+${hidden} ` +
        `more${top ? ` (lowest severity S${top})` : ""}</li>`);
    }
    return {shown, mine};
  }

  let layout = 0;
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
    }
    const urgent = cols.reported.filter((i) => i.severity >= 4).length;
    // empty columns give their width to the unacknowledged one
    const widths = (sub) => [`${(0.6 + sub).toFixed(1)}fr`].concat(COLUMNS.slice(1)
      .map((c) => (counts[c] ? "1fr" : ".45fr"))).join(" ");
    const first = cols.reported.reduce((o, i) => (!o || i.reported_at < o.reported_at ? i : o),
                                       null);
    const oldest = first ? first.id : "";
    // the roomiest layout that shows every unacknowledged card, else every S4/S5 of them
    // (denser layouts show more; the search starts from the last one: a few reflows, not all)
    const repCol = document.querySelector('.col[data-status="reported"]');
    let drawn = -1;
    const memo = {};
    const shownAt = (k) => {
      if (!(k in memo)) {
        const L = LAYOUTS[k];
        board.dataset.sub = L.sub;
        board.querySelector(".cols").style.gridTemplateColumns = widths(L.sub);
        board.classList.toggle("compact", !L.full);
        document.body.classList.toggle("flash", L.wide);
        memo[k] = fill(repCol, cols.reported, counts.reported, oldest).shown;
        drawn = k;
      }
      return memo[k];
    };
    const last = LAYOUTS.length - 1;
    let k = Math.min(layout, last);
    const need = shownAt(last) >= counts.reported ? counts.reported : urgent;
    if (shownAt(last) < need) k = last;
    else if (shownAt(k) >= need) { while (k > 0 && shownAt(k - 1) >= need) k--; }
    else { while (k < last && shownAt(k) < need) k++; }
    layout = k;
    if (drawn !== k) { delete memo[k]; shownAt(k); }
    for (const col of COLUMNS.slice(1)) {
      fill(document.querySelector(`.col[data-status="${col}"]`), cols[col], counts[col], "");
    }
    board.dataset.layout = String(layout);
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
    const warned = new Set();  // early warnings of the last 15 minutes: their zones pulse
    for (const e of log) {
      if (e.kind === "fixture.early_warning" && Date.parse(e.at) >= since) {
        for (const z of e.zones || [e.location]) warned.add(z);
      }
    }
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
    const pins = [];
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

  function deliveryTile() {
    if (!delivery) return "";
    const since = (performance.now() - deliveryAt) / 1000;  // ages were as of the push
    const rows = delivery.map((r) => {
      const bits = [r.queued ? `<b>${r.queued} queued</b>` : "delivered"];
      if (r.oldest_s != null) bits.push(`oldest ${secs(r.oldest_s + since)}`);
      if (r.last_429_s != null) bits.push(`last 429 ${secs(r.last_429_s + since)} ago`);
      const cls = r.queued ? (r.oldest_s + since > 60 ? "bad" : "warn") : "ok";
      return `<li class="${cls}" data-chat="${esc(r.chat)}"><span class="chat">` +
        `${esc(r.platform)} ${esc(r.name || r.chat)}</span> ${bits.join(" · ")}</li>`;
    });
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
    const out = [tile("Phase", t.phase_label),
                 tile("Open", t.open, t.unacked ? `<div class="warn">${t.unacked} ` +
                      "not acknowledged</div>" : ""),
                 tile("Closed", t.closed)];
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
    out.push(deliveryTile());
    $("#tiles").innerHTML = out.join("");
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
    $("#log").innerHTML = rows.map((e) =>
      `<li class="ev k-${esc(e.kind.replace(".", "-"))}${e.severity ? " sev" + e.severity : ""}"` +
      ` data-id="${esc(e.id)}"><time>${fmt.format(new Date(e.at))}</time>` +
      `<span class="ph">${esc((e.phase || "").replace("_", " "))}</span>` +
      `<span class="who">${esc(e.who)}</span><span class="what">${esc(e.what)}</span></li>`
    ).join("");
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
      const r = await fetch(`/control/chart.svg?fixture=${encodeURIComponent(state.fixture)}`,
                            {credentials: "same-origin"});
      if (r.ok) $("#chart").innerHTML = await r.text();
    }, 3000);
  }

  function apply(change) {
    const e = change.event;
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
    alertFor(change);
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
      return;
    }
    $("#live").className = "live off";
    $("#live").textContent = "● NOT LIVE";
    if (notLiveSince !== null) return;
    notLiveSince = now();
    $("#notlive-since").textContent = fmtS.format(new Date(notLiveSince));
    $("#notlive").hidden = false;
    document.body.classList.add("stale");
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
    const url = `/control/events?fixture=${encodeURIComponent(state.fixture)}` +
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
    const r = await fetch(`/control/incidents?fixture=${encodeURIComponent(state.fixture)}`,
                          {credentials: "same-origin"}).catch(() => null);
    if (!r || !r.ok) return;
    const body = await r.json();
    Object.assign(incidents, body.incidents);
    render();
  }

  // ---- alerts: a new S4/S5 or an escalation stays on screen until acknowledged
  const alerts = new Map();  // incident id -> why
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
  function raise(id, why, quiet) {
    const inc = incidents[id];
    if (!inc || inc.status !== "reported" || alerts.has(id)) return;
    alerts.set(id, why);
    if (sound && !quiet) beep();
  }
  function renderAlerts() {
    for (const id of [...alerts.keys()]) {
      const inc = incidents[id];
      if (!inc || inc.status !== "reported") alerts.delete(id);
    }
    const el = $("#alerts");
    const list = [...alerts.entries()].map(([id, why]) => [incidents[id], why])
      .sort(([a], [b]) => bySeverity(a, b));
    el.hidden = !list.length;
    const may = state.me.actions.includes("ack");
    const room = innerHeight < 900 ? 1 : 2;  // the board keeps its height on a laptop
    el.innerHTML = list.slice(0, room).map(([i, why]) =>
      `<div class="alert sev${i.severity}" data-id="${esc(i.id)}">` +
      `<span class="badge sev${i.severity}">S${i.severity}</span> <b>${esc(why)}</b> ` +
      `<span class="what">${esc(i.id)} ${esc(i.type_label)}</span> · ` +
      `<span class="where">${esc(i.place || i.location_label)}</span>` +
      (i.description ? ` <span class="words">“${esc(i.description)}”</span>` : "") +
      ` <span class="age" data-at="${esc(i.reported_at)}">${age(i.reported_at)}</span>` +
      (may ? button(i, "ack", "Acknowledge") : '<span class="wait">waiting for control</span>') +
      "</div>").join("") +
      (list.length > room ? `<div class="alert more">+${list.length - room} more not ` +
        "acknowledged (on the board, worst first)</div>" : "");
  }

  function alertFor(change) {
    const e = change.event, inc = change.incident;
    if (!inc || inc.status !== "reported") return;
    if (e.kind === "incident.reported" && inc.severity >= 4) raise(inc.id, `New S${inc.severity}`);
    else if (e.kind === "incident.escalated") raise(inc.id, "Escalated: not acknowledged");
    else if (e.kind === "incident.amended" && inc.severity >= 4) {
      raise(inc.id, `Now S${inc.severity}`);
    } else if (e.kind === "incident.merged" && inc.severity >= 4) {
      raise(inc.id, `S${inc.severity}, another report`);
    }
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
        const r = await fetch(`/control/action?fixture=${encodeURIComponent(state.fixture)}`, {
          method: "POST", credentials: "same-origin",
          headers: {"Content-Type": "application/json", "X-CSRF-Token": csrf},
          body: JSON.stringify({action: btn.dataset.action, incident: btn.dataset.incident,
                                id: pressId()})});
        const body = await r.json();
        toast(body.text, body.ok);
      } catch (err) {
        toast("Not sent: the bot is not answering. Try again.", false);
      } finally {
        btn.disabled = false;
      }
      return;
    }
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
    const r = await fetch(`/control/incidents?fixture=${encodeURIComponent(state.fixture)}`,
                          {credentials: "same-origin"});
    if (!r.ok) { setTimeout(loadRest, 2000); return; }
    const body = await r.json();
    for (const [id, inc] of Object.entries(body.incidents)) {
      if (!touched.has(id)) incidents[id] = inc;  // what the live feed brought is newer
    }
    partial = false;
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
    for (const i of open()) {
      if (i.status === "reported" && i.severity >= 4) raise(i.id, "Not acknowledged", true);
    }
    renderSound();
    renderAlerts(); renderBoard(); renderPins(); renderTiles(); renderLog(); renderPosts();
    document.body.dataset.ready = "1";
    connect();
    if (partial) requestAnimationFrame(() => setTimeout(loadRest, 0));
    else document.body.dataset.complete = String(Math.max(1, Math.round(performance.now())));
  }
  requestAnimationFrame(() => setTimeout(start, 0));
  setTimeout(start, 250);
})();
