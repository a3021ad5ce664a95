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
  let deliveryAt = performance.now();
  let offset = Date.parse(state.now) - Date.now();
  const SEV = {1: "#8d99ae", 2: "#2a9d8f", 3: "#e9c46a", 4: "#f4a261", 5: "#e63946"};
  const CARDS = 30;
  const COLUMNS = ["reported", "acknowledged", "dispatched", "on_scene", "contained"];
  const fmt = new Intl.DateTimeFormat("en-GB", {hour: "2-digit", minute: "2-digit",
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

  function buttons(inc) {
    const may = new Set(state.me.actions);
    const out = [];
    if (may.has("ack") && inc.status === "reported") out.push(["ack", "Acknowledge"]);
    if (may.has("dispatch") && (inc.status === "reported" || inc.status === "acknowledged")) {
      out.push(["dispatch", "Dispatch"]);
    }
    if (may.has("resolve")) out.push(["resolve", "Resolve"]);
    return out.map(([a, label]) => `<button type="button" class="act act-${a}" ` +
      `data-action="${a}" data-incident="${esc(inc.id)}">${label}</button>`).join("");
  }

  function renderBoard() {
    const items = open().sort((a, b) => a.reported_at.localeCompare(b.reported_at));
    const oldest = items.find((i) => i.status === "reported");
    for (const col of COLUMNS) {
      const el = document.querySelector(`.col[data-status="${col}"]`);
      const mine = items.filter((i) => column(i.status) === col);
      const count = partial ? Math.max(mine.length, state.columns[col] || 0) : mine.length;
      el.querySelector(".n").textContent = count ? count : "";
      // a wall screen shows the oldest few per column; the rest are counted, not drawn
      const more = count > CARDS ? `<li class="more">+${count - CARDS} more</li>` : "";
      el.querySelector("ol").innerHTML = mine.slice(0, CARDS).map((i) => {
        const cls = ["card", "sev" + i.severity];
        if (oldest && i.id === oldest.id) cls.push("oldest");
        return `<li class="${cls.join(" ")}" data-id="${esc(i.id)}">` +
          `<div class="line1"><b>${esc(i.id)}</b> <span class="badge sev${i.severity}">` +
          `S${i.severity}</span> <span class="age" data-at="${esc(i.reported_at)}">` +
          `${age(i.reported_at)}</span></div>` +
          `<div class="what">${esc(i.type_label)}</div>` +
          `<div class="where">${esc(i.location_label)}</div>` +
          (i.owner_name ? `<div class="owner">${esc(i.owner_name)}</div>` : "") +
          (oldest && i.id === oldest.id ? '<div class="flag">OLDEST UNACKED</div>' : "") +
          `<div class="acts">${buttons(i)}</div></li>`;
      }).join("") + more;
    }
  }

  function renderPins() {
    if (partial) return;  // the server drew tonight's pins; redrawn once all incidents are here
    const byZone = {};
    for (const i of Object.values(incidents)) {
      (byZone[i.location] = byZone[i.location] || []).push(i);
    }
    const out = [];
    for (const [zone, list] of Object.entries(byZone)) {
      const z = zones[zone];
      if (!z) continue;
      const live = list.filter((i) => !i.closed);
      const worst = Math.max(...(live.length ? live : list).map((i) => i.severity));
      let cls = list.some((i) => i.status === "reported") ? " pulse" : "";
      if (!live.length) cls += " closed";
      const [x, y] = z.pin;
      out.push(`<g class="pin sev${worst}${cls}" data-zone="${esc(zone)}">` +
        `<circle cx="${x}" cy="${y}" r="24" fill="${SEV[worst]}"/>` +
        `<text x="${x}" y="${y + 9}">${list.length}</text></g>`);
    }
    $("#pins").innerHTML = out.join("");
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

  let pending = false;
  function render() {
    if (pending) return;
    pending = true;
    requestAnimationFrame(() => {
      pending = false;
      renderBoard(); renderPins(); renderTiles(); renderLog();
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

  function connect() {
    const url = `/control/events?fixture=${encodeURIComponent(state.fixture)}` +
      `&after=${encodeURIComponent(state.last)}`;
    const source = new EventSource(url);
    source.addEventListener("change", (msg) => {
      state.last = msg.lastEventId || state.last;
      apply(JSON.parse(msg.data));
    });
    // the chart is redrawn by the server once for all screens and pushed here
    source.addEventListener("chart", (msg) => { $("#chart").innerHTML = JSON.parse(msg.data).svg; });
    source.addEventListener("delivery", (msg) => {
      delivery = JSON.parse(msg.data).rows;
      deliveryAt = performance.now();
      renderTiles();
    });
    source.addEventListener("signout", () => { source.close(); location.reload(); });
    let opened = false;
    source.onopen = () => {
      $("#live").className = "live on";
      if (opened) refreshChart();  // a redraw pushed while this screen was away is not replayed
      opened = true;
    };
    source.onerror = () => { $("#live").className = "live off"; };
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
    const target = ev.target.closest("[data-zone]");
    if (target) { showZone(target.dataset.zone); return; }
    if (ev.target.closest("#zone-panel .close")) $("#zone-panel").hidden = true;
  });
  document.addEventListener("keydown", (ev) => {
    const z = ev.target.closest && ev.target.closest("[data-zone]");
    if (z && (ev.key === "Enter" || ev.key === " ")) showZone(z.dataset.zone);
    if (ev.key === "Escape") $("#zone-panel").hidden = true;
  });
  for (const id of ["#f-type", "#f-sev", "#f-zone", "#f-status"]) {
    $(id).addEventListener("change", renderLog);
  }
  setInterval(() => {
    $("#clock").textContent = fmt.format(new Date(now()));
    for (const el of document.querySelectorAll(".age")) el.textContent = age(el.dataset.at);
    if (delivery && delivery.some((r) => r.queued || r.last_429_s != null)) renderTiles();
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
    renderBoard(); renderPins(); renderTiles(); renderLog();
    // when every incident was drawn, in ms after the navigation started (bench/web.py)
    document.body.dataset.complete = String(Math.max(1, Math.round(performance.now())));
  }

  renderBoard(); renderPins(); renderTiles(); renderLog();
  document.body.dataset.ready = "1";
  connect();
  if (partial) requestAnimationFrame(() => setTimeout(loadRest, 0));
  else document.body.dataset.complete = String(Math.max(1, Math.round(performance.now())));
})();
