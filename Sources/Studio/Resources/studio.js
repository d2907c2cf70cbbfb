// ShieldBus Studio's page: folds the bus's events into the phone, the timeline, the bus list and the state.
// Everything shown is derived from the events alone, so a live broker and a recorded journal draw the same way.
"use strict";

const $ = (id) => document.getElementById(id);
const studio = { mode: "live", apps: [], events: [], dropped: 0, status: null, connection: null, index: null, openSeq: new Set() };
const categoryColors = {
  social: "#e1306c", games: "#7c3aed", entertainment: "#ef4444", "productivity-finance": "#0a84ff", education: "#f59e0b",
  "health-fitness": "#22c55e", "information-reading": "#64748b", creativity: "#ec4899", "shopping-food": "#f97316",
  travel: "#14b8a6", utilities: "#6b7280", other: "#475569",
};

// MARK: The model: what the device showed and held after a prefix of the events.

function emptyModel() {
  return { foreground: { kind: "home" }, shield: null, groups: {}, stores: {}, schedules: [], notifications: [], plugins: {}, failedCalls: {}, time: null };
}

function apply(model, event) {
  const body = event.body || {};
  model.time = event.time;
  switch (event.topic) {
    case "activity.app.opened":
      model.foreground = { kind: "app", name: body.application?.localizedDisplayName ?? "?" };
      model.shield = null;
      break;
    case "activity.web.visited":
      model.foreground = { kind: "web", domain: body.webDomain?.domain ?? "?", url: body.url, tab: body.tab, private: !!body.isPrivate };
      model.shield = null;
      break;
    case "activity.home":
    case "device.restarted":
      model.foreground = { kind: "home" };
      model.shield = null;
      break;
    case "shield.shown": {
      const target = body.target || {};
      if (target.application) model.foreground = { kind: "app", name: target.application.localizedDisplayName };
      else if (target.webDomain) {
        // A shield over the page on screen (a redraw, a lock set while reading) keeps its URL; a page shielded on its
        // first visit was never shown, and the shield tells its tab and privacy.
        const fg = model.foreground;
        const same = fg.kind === "web" && fg.domain === target.webDomain.domain && (body.tab === undefined || fg.tab === body.tab);
        model.foreground = { kind: "web", domain: target.webDomain.domain, url: same ? fg.url : "https://" + target.webDomain.domain,
          tab: body.tab ?? (same ? fg.tab : undefined), private: body.isPrivate ?? (same ? fg.private : false) };
      }
      model.shield = body;
      break;
    }
    case "shield.dismissed":
      model.shield = null;
      break;
    case "state.changed": {
      const group = (model.groups[body.group] ||= {});
      if (body.removed) delete group[body.key];
      else {
        // Every plugin that wrote the key: on iOS any process of the group may, and a second one is worth seeing.
        const writers = group[body.key]?.writers ?? [];
        group[body.key] = { writer: body.writer, version: body.version, time: event.time,
          writers: writers.includes(body.writer) ? writers : [...writers, body.writer] };
      }
      break;
    }
    case "state.call-failed":
      // What iOS would have let fail silently (a refused setter, an App Group that is not the plugin's).
      (model.failedCalls[event.source] ||= []).push({ call: body.call, message: body.message, time: event.time });
      break;
    case "managedsettings.changed":
      model.stores[body.store] = { shield: body.shield || {}, writer: body.writer, time: event.time };
      break;
    case "managedsettings.read.reply":
      // A read (the Studio's own at connect, or a plugin's) tells every store as it is, whoever wrote it.
      for (const [name, shield] of Object.entries(body.ok ? body.value?.stores || {} : {})) {
        model.stores[name] = { shield, writer: model.stores[name]?.writer ?? "(before the Studio)", time: model.stores[name]?.time ?? event.time };
      }
      break;
    case "input.look.reply": {
      // A look at the phone (the Studio's own at connect) tells what is on screen and waiting, whatever came before.
      const look = body.ok && event.source === "broker" ? body.value || {} : null;
      if (!look) break;
      if (look.app) model.foreground = { kind: "app", name: look.app.application?.localizedDisplayName ?? "?" };
      else if (look.web) model.foreground = { kind: "web", domain: look.web.webDomain?.domain ?? "?", url: look.web.url, tab: look.web.tab, private: !!look.web.isPrivate };
      else model.foreground = { kind: "home" };
      model.shield = look.shield || null;
      model.notifications = (look.notifications || []).map((n) => ({ ...n, time: event.time })).reverse().slice(0, 5);
      break;
    }
    case "notification.posted":
      model.notifications = [{ ...body, time: event.time }, ...model.notifications.filter((n) => n.id !== body.id)].slice(0, 5);
      break;
    case "notification.tapped":
      model.notifications = model.notifications.filter((n) => n.id !== body.id);
      break;
    case "plugin.started": plugin(model, body.name).restarts = body.restarts ?? 0; plugin(model, body.name).state = "starting"; break;
    case "plugin.up": plugin(model, body.name).state = "running"; break;
    case "plugin.down": plugin(model, body.name).state = "down"; break;
    case "plugin.exited": plugin(model, body.name).state = "restarting"; break;
    case "plugin.failed": plugin(model, body.name).state = "failed"; break;
  }
  if (event.schedules) model.schedules = event.schedules;
}

function plugin(model, name) {
  return (model.plugins[name] ||= { name, state: "?", restarts: 0 });
}

let liveModel = emptyModel();

/// The model at the instant shown: the live one, or the journal folded up to the slider.
function currentModel() {
  if (studio.index === null) return liveModel;
  const model = emptyModel();
  for (let i = 0; i < studio.index; i++) apply(model, studio.events[i]);
  return model;
}

function visibleEvents() {
  return studio.index === null ? studio.events : studio.events.slice(0, studio.index);
}

// MARK: Drawing

function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes)) {
    if (key === "style" && typeof value === "object") Object.assign(node.style, value);
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (value !== undefined && value !== null && value !== false) node.setAttribute(key, value);
  }
  for (const child of children.flat()) if (child !== null && child !== undefined) node.append(child);
  return node;
}

function appGlyph(name, size) {
  const app = studio.apps.find((a) => a.name === name);
  const color = categoryColors[app?.category] || "#475569";
  return el("span", { class: "glyph", style: { background: `linear-gradient(145deg, ${color}, ${color}bb)`, width: size, height: size } },
    (name || "?").replace(/[^\p{L}\p{N}]/gu, "").slice(0, 1) || "•");
}

function drawPhone(model) {
  const screen = $("screen");
  screen.replaceChildren();
  const fg = model.foreground;
  if (fg.kind === "home") {
    screen.append(el("div", { class: "homegrid", "data-testid": "home-screen" },
      studio.apps.map((app) => el("button", { class: "appicon", type: "button", title: `Open ${app.name}`, "data-testid": `app-${app.name}`,
        onclick: () => act("open", app.name) }, appGlyph(app.name), el("span", { class: "label" }, app.name)))));
  } else if (fg.kind === "app") {
    screen.append(el("div", { class: "appview", "data-testid": "foreground-app", "data-app": fg.name },
      appGlyph(fg.name), el("h2", {}, fg.name), el("span", { class: "muted" }, "in use")));
  } else {
    screen.append(el("div", { class: "webview" + (fg.private ? " private" : ""), "data-testid": "foreground-web", "data-domain": fg.domain },
      el("div", { class: "urlbar" }, (fg.private ? "Private · " : "") + (fg.url || fg.domain)), el("div", { class: "page" }, fg.domain)));
  }
  if (model.shield) screen.append(drawShield(model.shield));
  const latest = model.notifications[0];
  const banner = $("banner");
  banner.hidden = !latest;
  if (latest) {
    banner.replaceChildren(el("span", { class: "app" }, latest.kind || "notification"), el("b", {}, latest.title || ""), latest.body || "");
    banner.onclick = () => act("notification-tap", latest.id);
  }
  $("device-clock").textContent = model.time ? clockOf(model.time).slice(0, 5) : "--:--";
}

/// The shield as iOS lays out a ShieldConfiguration: blur and color, icon, title, subtitle, then one or two buttons.
function drawShield(shown) {
  const c = shown.configuration || {};
  const dark = /Dark|dark/.test(c.backgroundBlurStyle || "");
  const icon = c.icon
    ? el("img", { class: "icon", src: `/icon/${encodeURIComponent(c.icon)}`, alt: "", "data-testid": "shield-icon" })
    : el("div", { class: "icon system", "aria-hidden": "true" }, "⌛");
  const buttons = [el("button", { class: "primary", type: "button", "data-testid": "shield-primary",
    style: { background: c.primaryButtonBackgroundColor || "#0a84ff", color: c.primaryButtonLabel?.color || "#fff" },
    onclick: () => act("press", "primary") }, c.primaryButtonLabel?.text || "OK")];
  if (c.secondaryButtonLabel) {
    buttons.push(el("button", { class: "secondary", type: "button", "data-testid": "shield-secondary", style: { color: c.secondaryButtonLabel.color },
      onclick: () => act("press", "secondary") }, c.secondaryButtonLabel.text));
  }
  return el("div", { class: "shield " + (dark ? "dark" : "light"), "data-testid": "shield", style: { backgroundColor: c.backgroundColor } },
    el("div", { class: "by" }, `drawn by ${shown.renderedBy}${shown.fallbackReason ? " · " + shown.fallbackReason : ""}`),
    el("div", { class: "body" }, icon,
      el("p", { class: "title", "data-testid": "shield-title", style: { color: c.title?.color } }, c.title?.text || ""),
      el("p", { class: "subtitle", "data-testid": "shield-subtitle", style: { color: c.subtitle?.color } }, c.subtitle?.text || "")),
    el("div", { class: "buttons" }, buttons));
}

function clockOf(time) {
  const event = studio.events.find((e) => e.time >= time) || studio.events[studio.events.length - 1];
  return event ? event.clock : "";
}

function drawTimeline(events) {
  const lines = [];
  let day = null;
  for (let i = events.length - 1; i >= 0 && lines.length < 800; i--) {
    const e = events[i];
    if (!e.story) continue;
    if (e.day !== day) {
      day = e.day;
      lines.push(el("span", { class: "day" }, `── ${day} ─────────────────────────────────`));
    }
    lines.push(el("span", { class: e.story.kind }, `${e.clock.slice(0, 8)}  ${e.story.kind.padEnd(10)} ${e.story.text}`));
  }
  $("timeline").replaceChildren(...lines);
}

function drawBus(events) {
  const prefix = $("prefix").value.trim();
  const sender = $("plugin").value;
  const rows = [];
  let matching = 0;
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i];
    if (prefix && !e.topic.startsWith(prefix)) continue;
    if (sender && e.source !== sender) continue;
    matching++;
    if (rows.length >= 400) continue;
    const open = studio.openSeq.has(e.seq);
    const envelope = { seq: e.seq, time: e.time, topic: e.topic, source: e.source, corr: e.corr, deadline: e.deadline, body: e.body };
    rows.push(el("li", { class: open ? "open" : "", "data-topic": e.topic, "data-source": e.source, "data-seq": e.seq, title: "Click for the JSON",
      onclick: () => { open ? studio.openSeq.delete(e.seq) : studio.openSeq.add(e.seq); scheduleDraw(); } },
      e.tap, open ? el("pre", { "data-testid": "event-json" }, JSON.stringify(envelope, null, 2)) : null));
  }
  $("bus").replaceChildren(...rows);
  $("bus-count").textContent = `${matching} of ${events.length} events${matching > 400 ? " (newest 400 shown)" : ""}`
    + (studio.dropped ? `; ${studio.dropped} older ones no longer kept (--keep-events)` : "");
  const senders = [...new Set(studio.events.map((e) => e.source))].sort();
  const select = $("plugin");
  if (select.options.length !== senders.length + 1) {
    const chosen = select.value;
    select.replaceChildren(el("option", { value: "" }, "every sender"), ...senders.map((s) => el("option", { value: s }, s)));
    select.value = chosen;
  }
}

function row(cells, header) {
  const attributes = (c) => typeof c === "object" && c && c.class ? (c.title ? { class: c.class, title: c.title } : { class: c.class }) : {};
  return el("tr", {}, cells.map((c) => el(header ? "th" : "td", attributes(c), c && c.text !== undefined ? c.text : c)));
}

function drawState(model) {
  const groupRows = [];
  for (const group of Object.keys(model.groups).sort()) {
    for (const key of Object.keys(model.groups[group]).sort()) {
      const entry = model.groups[group][key];
      const writers = (entry.writers ?? [entry.writer]).filter((w) => w !== "shieldbus");
      const writer = writers.length > 1 ? { text: `${entry.writer} (also ${writers.filter((w) => w !== entry.writer).join(", ")})`, class: "warn" } : entry.writer;
      groupRows.push(row([{ text: key, class: "mono" }, writer, `v${entry.version}`, clockOf(entry.time).slice(0, 8)]));
    }
  }
  $("groups").replaceChildren(row(["key", "writer", "version", "written"], true), ...groupRows);
  $("stores").replaceChildren(row(["store", "shields", "writer", "changed"], true), ...Object.keys(model.stores).sort().map((name) => {
    const store = model.stores[name];
    const shield = store.shield;
    const categories = shield.applicationCategories?.policy === "all" ? "all categories" : `${shield.applicationCategories?.categories?.length ?? 0} categories`;
    const what = `${shield.applications?.length ?? 0} apps, ${categories}, ${shield.webDomains?.length ?? 0} domains`;
    return row([{ text: name, class: "mono" }, what, store.writer, clockOf(store.time).slice(0, 8)]);
  }));
  const now = model.time ?? 0;
  $("schedules").replaceChildren(row(["activity", "interval", "next start", "next end"], true), ...model.schedules.map((s) => {
    const current = s.intervals.find((i) => i.end > now);
    const nextStart = s.intervals.find((i) => i.start > now)?.start;
    return row([{ text: s.activity, class: "mono" }, `${s.start}–${s.end}${s.repeats ? " daily" : " once"}`,
      nextStart ? zoned(nextStart) : "—", current ? zoned(current.end) : "—"]);
  }));
}

function zoned(time) {
  const zone = studio.connection?.timeZone || "UTC";
  return new Intl.DateTimeFormat("en-GB", { timeZone: zone, month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit" }).format(new Date(time));
}

function drawPlugins(model) {
  const live = studio.index === null && studio.status;
  // The supervised plugins; taps and tools (the Studio itself among them) come and go and are not plugins.
  const plugins = live ? (studio.status.plugins || []).filter((p) => p.supervised).map((p) => ({
    name: p.name, role: p.role, state: p.connected ? (p.state || "running") : (p.state || "gone"), restarts: p.restarts ?? 0, lag: p.lag ?? 0,
  })) : Object.values(model.plugins);
  const failed = (name) => {
    const calls = model.failedCalls[name] ?? [];
    return calls.length ? { text: String(calls.length), class: "warn", title: calls.map((c) => `${c.call}: ${c.message}`).join("\n") } : "0";
  };
  $("plugins").replaceChildren(row(["plugin", "state", "restarts", "lag", "failed calls"], true), ...plugins.map((p) =>
    row([p.name, el("span", { class: "pill " + p.state }, p.state === "running" ? "up" : p.state), String(p.restarts ?? 0), p.lag === undefined ? "—" : String(p.lag), failed(p.name)])));
}

function draw() {
  const model = currentModel();
  const events = visibleEvents();
  drawPhone(model);
  drawTimeline(events);
  drawBus(events);
  drawState(model);
  drawPlugins(model);
  if (studio.index !== null) {
    const last = events[events.length - 1];
    $("instant").textContent = last ? `${last.day} ${last.clock}  #${last.seq}  (${studio.index}/${studio.events.length})` : "before the first event";
  }
}

let drawPending = false;
function scheduleDraw() {
  if (drawPending) return;
  drawPending = true;
  requestAnimationFrame(() => { drawPending = false; draw(); });
}

// MARK: The person's actions: the same input requests as `shieldbus do`.

async function act(action, value, extra = {}) {
  const result = $("action-result");
  if (studio.mode !== "live") { result.textContent = "a recorded journal is replayed, not acted on"; return; }
  result.className = "result";
  result.textContent = `${action}${value ? " " + value : ""}…`;
  try {
    const response = await fetch("/api/input", { method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ action, value, ...extra }) });
    const answer = await response.json();
    result.className = answer.ok ? "result" : "result error";
    result.textContent = answer.ok ? `done: ${action}${value ? " " + value : ""}` : `refused: ${answer.error.message}`;
  } catch (error) {
    result.className = "result error";
    result.textContent = `no answer: ${error}`;
  }
}

$("person").addEventListener("click", (event) => {
  const action = event.target.dataset?.action;
  if (!action) return;
  if (action === "habit") act("habit", $("habit").value);
  else if (action === "visit") act("visit", $("url").value, { private: $("private").checked });
  else act(action);
});
$("home-indicator").addEventListener("click", () => act("home"));
$("prefix").addEventListener("input", scheduleDraw);
$("plugin").addEventListener("change", scheduleDraw);
$("slider").addEventListener("input", () => { studio.index = Number($("slider").value); scheduleDraw(); });
let playing = null;
$("play").addEventListener("click", () => {
  if (playing) { clearInterval(playing); playing = null; $("play").textContent = "▶"; return; }
  $("play").textContent = "❚❚";
  playing = setInterval(() => {
    if (studio.index >= studio.events.length) { $("play").click(); return; }
    studio.index += 1; $("slider").value = studio.index; scheduleDraw();
  }, 120);
});

// MARK: The feed

function receive(message) {
  switch (message.kind) {
    case "hello":
      studio.mode = message.mode;
      studio.apps = message.apps;
      if (message.mode === "journal") {
        $("scrubber").hidden = false;
        for (const button of document.querySelectorAll("#person button")) button.disabled = true;
      }
      break;
    case "backlog":
      studio.dropped += message.dropped || 0;
      for (const event of message.events) addEvent(event);
      break;
    case "event": addEvent(message.event); break;
    case "status": studio.status = message.status; break;
    case "connection": {
      studio.connection = message.connection;
      const node = $("connection");
      node.textContent = message.connection.message;
      node.className = "connection " + (message.connection.connected ? "up" : "down");
      break;
    }
  }
  scheduleDraw();
}

function addEvent(event) {
  studio.events.push(event);
  apply(liveModel, event);
  if (studio.mode === "journal") {
    const atEnd = studio.index === null || studio.index === studio.events.length - 1;
    $("slider").max = studio.events.length;
    if (atEnd) { studio.index = studio.events.length; $("slider").value = studio.index; }
  }
}

function connect() {
  const socket = new WebSocket(`ws://${location.host}/ws`);
  socket.onmessage = (message) => receive(JSON.parse(message.data));
  socket.onclose = () => {
    $("connection").textContent = "the Studio server went away; reconnecting…";
    $("connection").className = "connection down";
    setTimeout(() => { studio.events = []; studio.dropped = 0; liveModel = emptyModel(); studio.index = null; connect(); }, 1000);
  };
}
connect();
