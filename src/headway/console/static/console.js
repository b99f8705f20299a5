// headway console: reads /api/state every 2 s, draws the page and its SVG charts, and
// sends controls to /api/control. Everything shown is set as text (host names and URLs
// come from the web). No library, nothing fetched from elsewhere.
"use strict";

(function () {
  const REFRESH_MS = 2000;
  const SVG = "http://www.w3.org/2000/svg";
  let token = null;
  let state = null;
  let hostList = "busiest";
  let searching = false;
  let canControl = false;

  // the token arrives in the address's fragment (never sent to a server); kept for the tab
  function takeToken() {
    const m = /(?:^|[#&])token=([^&]+)/.exec(location.hash);
    if (!m) return false;
    token = decodeURIComponent(m[1]);
    sessionStorage.setItem("headway-token", token);
    history.replaceState(null, "", location.pathname + location.search);
    return true;
  }
  if (!takeToken()) token = sessionStorage.getItem("headway-token");
  window.addEventListener("hashchange", () => { if (takeToken() && state) render(state); });

  const $ = (id) => document.getElementById(id);
  const fmtInt = (n) => (n === null || n === undefined ? "–" : Math.round(n).toLocaleString("en-US"));
  const fmtNum = (n, d) => (n === null || n === undefined ? "–" : Number(n).toFixed(d));
  function fmtBytes(n) {
    if (!n) return "0 B";
    const units = ["B", "KB", "MB", "GB", "TB"];
    let i = 0;
    while (n >= 1000 && i < units.length - 1) { n /= 1000; i++; }
    return n.toFixed(n >= 100 || i === 0 ? 0 : 1) + " " + units[i];
  }
  function fmtAge(s) {
    if (s === null || s === undefined) return "–";
    if (s < 60) return s.toFixed(0) + " s";
    if (s < 3600) return (s / 60).toFixed(0) + " min";
    return (s / 3600).toFixed(1) + " h";
  }
  function fmtTime(t) {
    const d = new Date(t * 1000);
    return d.toLocaleTimeString("en-GB", { hour12: false });
  }
  function el(tag, text, cls) {
    const e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = String(text);
    if (cls) e.className = cls;
    return e;
  }
  function setText(id, text) { $(id).textContent = text; }
  function fillBody(table, rows) {
    const body = $(table).tBodies[0];
    body.replaceChildren(...rows);
  }
  function cell(text, cls) { return el("td", text, cls); }

  function notice(text) {
    const n = $("notice");
    n.hidden = !text;
    n.textContent = text || "";
  }

  // -- drawing ----------------------------------------------------------------------
  function drawChart(id, points, cls) {
    const svg = $(id);
    svg.replaceChildren();
    if (cls) svg.classList.add(cls);
    const W = 300, H = 100;
    for (const y of [25, 50, 75]) {
      const g = document.createElementNS(SVG, "line");
      g.setAttribute("x1", 0); g.setAttribute("x2", W);
      g.setAttribute("y1", y); g.setAttribute("y2", y);
      g.setAttribute("class", "grid");
      svg.appendChild(g);
    }
    const cap = svg.parentElement.querySelector("figcaption");
    const base = cap.dataset.base || cap.textContent;
    cap.dataset.base = base;
    if (!points.length) { cap.textContent = base + " (no data yet)"; return; }
    const t1 = points[points.length - 1][0];
    // the last hour, or less while the crawl is young (at least ten minutes wide)
    const t0 = Math.min(Math.max(points[0][0], t1 - 3600), t1 - 600);
    const vmax = Math.max(...points.map((p) => p[1]), 1e-9);
    const x = (t) => ((t - t0) / Math.max(1, t1 - t0)) * W;
    const y = (v) => H - 4 - (v / vmax) * (H - 10);
    const coords = points.map((p) => x(p[0]).toFixed(1) + "," + y(p[1]).toFixed(1));
    const area = document.createElementNS(SVG, "polygon");
    area.setAttribute("points", coords.concat([x(t1).toFixed(1) + "," + H, x(points[0][0]).toFixed(1) + "," + H]).join(" "));
    area.setAttribute("class", "area");
    svg.appendChild(area);
    const line = document.createElementNS(SVG, "polyline");
    line.setAttribute("points", coords.join(" "));
    line.setAttribute("class", "line");
    svg.appendChild(line);
    const last = points[points.length - 1][1];
    cap.textContent = "";
    cap.appendChild(el("span", base));
    cap.appendChild(el("span", "now " + fmtNum(last, last < 10 && last % 1 ? 1 : 0) + " · max " + fmtNum(vmax, vmax < 10 && vmax % 1 ? 1 : 0)));
  }

  function renderNow(s) {
    const n = s.now, fr = n.frontier;
    setText("now-pages", fmtInt(n.pages));
    setText("now-pps", fmtNum(n.pages_per_second, 1));
    setText("now-bytes", fmtBytes(n.bytes));
    setText("now-errors", fmtInt(n.errors));
    setText("now-retry", fmtNum(n.retry_ratio * 100, 1) + " %");
    setText("now-inflight", fmtInt(n.in_flight));
    setText("fr-queued", fmtInt(fr.queued));
    setText("fr-leased", fmtInt(fr.leased));
    setText("fr-done", fmtInt(fr.done));
    setText("fr-failed", fmtInt(fr.failed));
    setText("fr-shed", fmtInt(Object.values(fr.shed || {}).reduce((a, b) => a + b, 0)));
    $("fr-shed").title = Object.entries(fr.shed || {}).map(([k, v]) => k + ": " + v).join(", ");
    setText("fr-parked", fmtInt(fr.parked));
    const OK = new Set(["ok", "redirect", "not_modified", "client_error"]);
    const errs = Object.entries(n.outcomes || {}).filter(([k]) => !OK.has(k)).sort((a, b) => b[1] - a[1]);
    const chips = errs.map(([k, v]) => el("li", k + " " + fmtInt(v)));
    if (!chips.length) chips.push(el("li", "no errors", "none"));
    $("outcomes").replaceChildren(...chips);
    const stages = (n.stages || []).map((st) => {
      const row = el("div", null, "stage");
      row.appendChild(el("span", st.name));
      const meter = el("div", null, "meter");
      const fill = el("span");
      fill.style.width = (st.capacity ? Math.min(100, (100 * st.depth) / st.capacity) : 0).toFixed(0) + "%";
      meter.appendChild(fill);
      row.appendChild(meter);
      row.appendChild(el("span", st.depth + "/" + st.capacity + (st.blocked_puts ? " · " + fmtInt(st.blocked_puts) + " blocked" : "")));
      return row;
    });
    $("stages").replaceChildren(...stages);
  }

  function renderNodes(s) {
    const rows = s.nodes.map((nd) => {
      const tr = el("tr");
      tr.dataset.node = nd.node;
      if (!nd.running) tr.className = "stale";
      tr.append(
        cell(nd.node, "host"), cell(nd.state), cell(fmtNum(nd.pages_per_second, 1), "num"),
        cell(fmtInt(nd.fetches), "num"), cell(fmtInt(nd.errors), "num"),
        cell(nd.cpu_share === null || nd.cpu_share === undefined ? "–" : fmtNum(nd.cpu_share * 100, 0) + " %", "num"),
        cell(nd.rss_mib ? fmtNum(nd.rss_mib, 0) + " MiB" : "–", "num"),
        cell(nd.shards_held === null || nd.shards_held === undefined ? "–" : nd.shards_held, "num"),
        cell(fmtAge(nd.heartbeat_age), "num"),
      );
      const td = el("td");
      for (const kind of ["pause", "resume", "stop"]) {
        const b = el("button", kind);
        b.type = "button";
        b.dataset.kind = kind;
        b.dataset.node = nd.node;
        b.disabled = !canControl || !nd.running;
        b.addEventListener("click", () => control(kind, {}, nd.node));
        td.appendChild(b);
      }
      tr.appendChild(td);
      return tr;
    });
    fillBody("nodes", rows);
  }

  function hostRows(list) {
    return list.map((h) => {
      const tr = el("tr");
      tr.dataset.host = h.host;
      const errs = Object.entries(h.errors || {}).map(([k, v]) => k + " " + v).join(", ");
      tr.append(
        cell(h.host, "host"), cell(fmtInt(h.pages), "num"), cell(fmtInt(h.queued) + (h.at_budget ? " (budget)" : ""), "num"),
        cell(fmtInt(h.in_flight), "num"), cell(h.gap === null ? "–" : fmtNum(h.gap, 2), "num"),
        cell(h.limit === null ? "–" : fmtNum(h.limit, 1), "num"), cell(h.backoff ? fmtNum(h.backoff, 1) : "–", "num"),
        cell(h.retry_after ? fmtNum(h.retry_after, 0) : "–", "num"), cell(h.robots || "–"),
        cell(errs || "–", errs ? "err" : ""),
      );
      tr.addEventListener("click", () => { $("host-name").value = h.host; });
      return tr;
    });
  }

  function renderHosts(s) {
    setText("hosts-known", "(" + fmtInt(s.hosts.known) + " known)");
    if (searching) return;
    fillBody("hosts", hostRows(s.hosts[hostList] || []));
  }

  function renderSeeds(s) {
    setText("seeds-total", s.seeds.total > s.seeds.rows.length ? "(first " + s.seeds.rows.length + " of " + fmtInt(s.seeds.total) + ")" : "(" + s.seeds.total + ")");
    fillBody("seeds", s.seeds.rows.map((r) => {
      const tr = el("tr");
      tr.append(
        cell(r.url, "host"), cell(r.robots || "not yet"),
        cell(r.first_fetch ? r.first_fetch + (r.status ? " " + r.status : "") : "not yet", r.first_fetch && r.first_fetch !== "ok" ? "err" : ""),
        cell(fmtInt(r.host_pages), "num"),
      );
      return tr;
    }));
  }

  function problemItems(list, none) {
    const items = list.map((p) => {
      const li = el("li");
      li.appendChild(el("span", fmtTime(p.at), "when"));
      li.appendChild(el("span", p.kind, "kind"));
      li.appendChild(document.createTextNode(" " + p.host + ": " + p.reason));
      if (p.url) li.appendChild(el("span", p.url, "url"));
      return li;
    });
    if (!items.length) items.push(el("li", none, "muted"));
    return items;
  }

  function renderProblems(s) {
    $("host-problems").replaceChildren(...problemItems(s.host_problems || [], "none"));
    $("problems").replaceChildren(...problemItems(s.problems, "none so far"));
  }

  function describe(c) {
    const a = c.args || {};
    switch (c.kind) {
      case "add-seeds": return "add " + (a.urls || []).length + " seed(s)";
      case "opt-out": return "opt out " + a.domain;
      case "host-override": return "override " + a.host + " " + Object.entries(a).filter(([k]) => k !== "host").map(([k, v]) => k + "=" + v).join(" ");
      case "host-exclude": return "exclude " + a.host;
      case "host-clear": return "clear " + a.host;
      default: return c.kind;
    }
  }

  function renderControls(s) {
    const c = s.controls;
    canControl = c.enabled && (!c.token_required || !!token) && !/finished/.test(s.state);
    let note = "";
    if (!c.enabled) note = "This console cannot record controls.";
    else if (c.token_required && !token) note = "Read-only: this console needs its token (open the address printed when it started).";
    else note = "Controls are recorded in the crawl's control log and applied by every node within a few seconds.";
    setText("controls-note", note);
    for (const b of document.querySelectorAll("#crawl-actions button, #controls-card button")) {
      b.disabled = !canControl;
    }
    fillBody("controls", c.recent.map((r) => {
      const tr = el("tr");
      tr.append(cell(r.seq, "num"), cell(fmtTime(r.at)), cell(describe(r)), cell(r.node || "all"), cell(r.origin));
      return tr;
    }));
  }

  function render(s) {
    state = s;
    setText("where", s.where);
    const badge = $("state");
    badge.textContent = s.state;
    badge.className = "badge " + (s.state.split(" ")[0] || "");
    if (s.error) badge.className = "badge error";
    notice(s.error || "");
    renderControls(s);
    renderNow(s);
    renderNodes(s);
    const h = s.history || [];
    drawChart("chart-pps", h.map((p) => [p[0], p[1]]));
    drawChart("chart-queued", h.map((p) => [p[0], p[2]]));
    drawChart("chart-errors", h.map((p) => [p[0], p[3]]), "errors");
    renderHosts(s);
    renderSeeds(s);
    renderProblems(s);
    setText("updated", "updated " + fmtTime(s.time) + " · refreshes every " + REFRESH_MS / 1000 + " s");
    document.body.dataset.updated = String(s.time);
  }

  async function refresh() {
    try {
      const r = await fetch("/api/state", { cache: "no-store" });
      const s = await r.json();
      if (!r.ok) throw new Error(s.error || r.statusText);
      render(s);
    } catch (e) {
      notice("cannot read the console's state: " + e.message);
      $("state").className = "badge error";
    }
  }

  async function searchHosts() {
    const q = $("host-q").value.trim();
    searching = q.length > 0;
    if (!searching) { if (state) renderHosts(state); return; }
    const url = "/api/hosts?q=" + encodeURIComponent(q) + "&sort=" + encodeURIComponent($("host-sort").value) + "&limit=100";
    try {
      const r = await fetch(url, { cache: "no-store" });
      const body = await r.json();
      if (!r.ok) throw new Error(body.error || r.statusText);
      fillBody("hosts", hostRows(body.hosts));
    } catch (e) {
      notice("host search failed: " + e.message);
    }
  }

  async function control(kind, args, node) {
    if (kind === "stop" && !confirm(node ? "Stop node " + node + "?" : "Stop the crawl?")) return;
    const headers = { "Content-Type": "application/json" };
    if (token) headers["X-Headway-Token"] = token;
    try {
      const r = await fetch("/api/control", {
        method: "POST", headers, body: JSON.stringify({ kind, args, node: node || null }),
      });
      const body = await r.json();
      if (!r.ok) throw new Error(body.error || r.statusText);
      notice("");
      refresh();
      return true;
    } catch (e) {
      notice(kind + ": " + e.message);
      return false;
    }
  }

  function hostArgs() {
    const args = { host: $("host-name").value.trim() };
    const delay = $("host-delay").value, budget = $("host-budget").value, conc = $("host-conc").value;
    if (delay !== "") args.delay = Number(delay);
    if (budget !== "") args.budget = Number(budget);
    if (conc !== "") args.concurrency = Number(conc);
    return args;
  }

  function wire() {
    for (const b of document.querySelectorAll("#crawl-actions button")) {
      b.addEventListener("click", () => control(b.dataset.kind, {}, null));
    }
    for (const t of document.querySelectorAll(".tab")) {
      t.addEventListener("click", () => {
        hostList = t.dataset.list;
        $("host-q").value = "";
        searching = false;
        for (const o of document.querySelectorAll(".tab")) o.classList.toggle("active", o === t);
        if (state) renderHosts(state);
      });
    }
    let timer = null;
    $("host-q").addEventListener("input", () => { clearTimeout(timer); timer = setTimeout(searchHosts, 250); });
    $("host-sort").addEventListener("change", searchHosts);
    $("host-search").addEventListener("submit", (e) => { e.preventDefault(); searchHosts(); });
    $("form-seeds").addEventListener("submit", async (e) => {
      e.preventDefault();
      const urls = $("seeds-text").value.split(/\s+/).filter(Boolean);
      if (urls.length && (await control("add-seeds", { urls }))) $("seeds-text").value = "";
    });
    $("form-optout").addEventListener("submit", async (e) => {
      e.preventDefault();
      const domain = $("optout-domain").value.trim();
      if (domain && (await control("opt-out", { domain }))) $("optout-domain").value = "";
    });
    $("form-host").addEventListener("submit", (e) => { e.preventDefault(); control("host-override", hostArgs()); });
    $("btn-exclude").addEventListener("click", () => control("host-exclude", { host: $("host-name").value.trim() }));
    $("btn-clear").addEventListener("click", () => control("host-clear", { host: $("host-name").value.trim() }));
  }

  wire();
  refresh();
  setInterval(refresh, REFRESH_MS);
  setInterval(() => { if (searching) searchHosts(); }, REFRESH_MS * 2);
})();
