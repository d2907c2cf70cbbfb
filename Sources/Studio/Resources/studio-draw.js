// ShieldBus Studio's page, its drawing: the phone, the notifications, the timeline, the bus, the state and the plugins.
// Incremental: an event adds its own lines and changes only what it changed, so a selection, a hover or a click in
// progress survives the events and status reports that keep coming.
"use strict";

/// How long a notification's banner shows, in device time (iOS shows one for a few seconds, then it is in the list).
const BANNER_MS = 5000;
const TIMELINE_LINES = 800, BUS_LINES = 400;
const categoryColors = {
  social: "#e1306c", games: "#7c3aed", entertainment: "#ef4444", "productivity-finance": "#0a84ff", education: "#f59e0b",
  "health-fitness": "#22c55e", "information-reading": "#64748b", creativity: "#ec4899", "shopping-food": "#f97316",
  travel: "#14b8a6", utilities: "#6b7280", other: "#475569",
};


// MARK: Drawing helpers: build nodes, and change only what differs.

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

function setText(node, text) {
  if (node.textContent !== text) node.textContent = text;
}

/// Brings `parent`'s children to `items` (each with a unique `key`), in order: a node is made (`make`) only for an item
/// that is new or changed, and one whose item is the same stays untouched, so a selection in it survives.
function syncChildren(parent, items, make) {
  const existing = new Map([...parent.children].map((node) => [node.dataset.key, node]));
  items.forEach((item, at) => {
    const signature = JSON.stringify(item);
    let node = existing.get(item.key);
    existing.delete(item.key);
    if (!node || node.dataset.signature !== signature) {
      const made = make(item);
      made.dataset.key = item.key;
      made.dataset.signature = signature;
      if (node) node.replaceWith(made);
      node = made;
    }
    if (parent.children[at] !== node) parent.insertBefore(node, parent.children[at] ?? null);
  });
  for (const node of existing.values()) node.remove();
}

/// A table of `rows` ({key, cells}); a cell is a string or {text, class?, title?, pill?, when?, note?} (`when`, `note`:
/// lines below, smaller).
function drawTable(table, header, rows) {
  if (!table.tBodies.length) table.append(el("thead", {}, el("tr", {}, header.map((h) => el("th", {}, h)))), el("tbody"));
  syncChildren(table.tBodies[0], rows, (row) => el("tr", {}, row.cells.map((c) => c === null || typeof c !== "object" ? el("td", {}, String(c ?? ""))
    : el("td", { class: c.class, title: c.title, "data-testid": c.testid }, c.pill ? el("span", { class: "pill " + c.pill }, c.text) : c.text,
      c.when ? el("small", { class: "note when", "data-testid": "stored-time" }, c.when) : null,
      c.note ? el("small", { class: "note" }, c.note) : null))));
}

// MARK: The phone

function appGlyph(name, size) {
  const app = studio.apps.find((a) => a.name === name);
  const color = categoryColors[app?.category] || "#475569";
  return el("span", { class: "glyph", style: { background: `linear-gradient(145deg, ${color}, ${color}bb)`, width: size, height: size } },
    (name || "?").replace(/[^\p{L}\p{N}]/gu, "").slice(0, 1) || "•");
}

let phoneKey = null;
function drawPhone(model) {
  // The screen is built again only when what is on it changed: a click on an app icon is never lost to a redraw.
  const key = JSON.stringify([model.foreground, model.shield, studio.apps.map((a) => a.name)]);
  if (key !== phoneKey) {
    phoneKey = key;
    const screen = $("screen");
    const fg = model.foreground;
    if (fg.kind === "home") {
      screen.replaceChildren(el("div", { class: "homegrid", "data-testid": "home-screen" },
        studio.apps.map((app) => el("button", { class: "appicon", type: "button", title: `Open ${app.name}`, "data-testid": `app-${app.name}`,
          onclick: () => act("open", app.name) }, appGlyph(app.name), el("span", { class: "label" }, app.name)))));
    } else if (fg.kind === "app") {
      screen.replaceChildren(el("div", { class: "appview", "data-testid": "foreground-app", "data-app": fg.name },
        appGlyph(fg.name), el("h2", {}, fg.name), el("span", { class: "muted" }, "in use")));
    } else {
      screen.replaceChildren(el("div", { class: "webview" + (fg.private ? " private" : ""), "data-testid": "foreground-web", "data-domain": fg.domain },
        el("div", { class: "urlbar" }, (fg.private ? "Private · " : "") + (fg.url || fg.domain)), el("div", { class: "page" }, fg.domain)));
    }
    if (model.shield) screen.append(drawShield(model.shield));
  }
  setText($("device-clock"), model.clock ? model.clock.slice(0, 5) : "--:--");
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

/// The device's time now: the latest event's, or the bus clock as last told (moved on at its speed since); a journal's
/// instant when replaying.
function deviceNow(model) {
  const bus = studio.index === null ? busClockNow() : null;
  return bus === null ? model.time ?? 0 : Math.max(model.time ?? 0, bus);
}

// MARK: The bus clock (live): its time, mode and speed, and the controls that steer it.

/// Bus time now: the broker's clock as last told (a status report or `clock.changed`), run on by the page's own clock
/// at the bus clock's speed (real: 1; paused or virtual: standing still).
function busClockNow() {
  const c = studio.busClock;
  if (!c) return null;
  const rate = c.paused || c.clock === "virtual" ? 0 : c.clock === "real" ? 1 : (c.speed ?? 1);
  return c.time + (performance.now() - c.at) * rate;
}

function speedText(speed) {
  return `×${Number.isInteger(speed) ? speed : Number(speed).toFixed(2)}`;
}

function drawClock() {
  const c = studio.busClock;
  if (studio.mode !== "live" || !c) return;
  const zone = studio.connection?.timeZone || "UTC";
  const at = new Intl.DateTimeFormat("en-GB", { timeZone: zone, weekday: "short", day: "2-digit", month: "short", hour: "2-digit",
    minute: "2-digit", second: "2-digit" }).format(new Date(busClockNow()));
  const node = $("bus-clock");
  setText(node, `${at}  ${c.clock}${c.clock === "scaled" ? " " + speedText(c.speed) : ""} · ${c.paused ? "paused" : "running"}`);
  node.classList.toggle("paused", !!c.paused);
  Object.assign(node.dataset, { mode: c.clock, paused: String(!!c.paused), rate: String(c.clock === "real" ? 1 : c.speed ?? "") });
  const speed = c.clock === "real" ? 1 : c.speed;
  for (const button of document.querySelectorAll("#clockbar [data-clock]")) {
    const action = button.dataset.clock;
    if (action === "speed") {
      button.classList.toggle("on", Number(button.dataset.speed) === speed);
      button.disabled = c.clock === "virtual";
    } else if (action === "pause") button.disabled = !!c.paused;
    else if (action === "resume") button.disabled = !c.paused;
  }
}

let bannerTimer = null;
/// The newest notification as a banner for BANNER_MS of device time after it was posted, unless dismissed; live, also
/// for BANNER_MS of the page's time at most (a virtual clock may stand still, and a banner must not stay).
function drawBanner(model) {
  clearTimeout(bannerTimer);
  const latest = model.notifications[0];
  let left = latest?.banner && !studio.dismissed.has(latest.id) ? BANNER_MS - (deviceNow(model) - latest.time) : 0;
  if (left > 0 && studio.index === null) {
    if (!studio.bannerSince.has(latest.id)) studio.bannerSince.set(latest.id, performance.now());
    left = Math.min(left, BANNER_MS - (performance.now() - studio.bannerSince.get(latest.id)));
  }
  const shown = left > 0 ? latest : null;
  const banner = $("banner");
  if (banner.dataset.id !== (shown?.id ?? "")) {
    banner.dataset.id = shown?.id ?? "";
    banner.replaceChildren(...(shown ? [el("span", { class: "app" }, shown.kind || "notification"), el("b", {}, shown.title || ""),
      el("span", {}, shown.body || ""), el("button", { class: "close", type: "button", title: "Dismiss", "aria-label": "Dismiss",
        "data-testid": "banner-close" }, "×")] : []));
  }
  banner.hidden = !shown;
  if (shown && studio.index === null) bannerTimer = setTimeout(() => drawBanner(currentModel()), left + 20);
}

function dismissBanner() {
  if ($("banner").dataset.id) studio.dismissed.add($("banner").dataset.id);
  drawBanner(currentModel());
}

/// The notifications not yet tapped, newest first (the Notification Center); a click taps one on the device.
function drawNotifications(model) {
  syncChildren($("notifications"), model.notifications.map((n) => ({ key: n.id, kind: n.kind, title: n.title, body: n.body })), (n) =>
    el("li", {}, el("button", { type: "button", class: "notification", title: "Tap the notification", onclick: () => act("notification-tap", n.key) },
      el("span", { class: "app" }, n.kind || "notification"), el("b", {}, n.title || ""), n.body || "")));
  $("notifications-empty").hidden = model.notifications.length > 0;
}

// MARK: The timeline and the bus, newest first: new lines are added at the top, nothing else is touched.

const timeline = { lines: 0 };
function timelineLine(e) {
  return el("span", { class: e.story.kind }, `${e.clock.slice(0, 8)}  ${e.story.kind.padEnd(10)} ${e.story.text}`);
}

function dayLine(day) {
  return el("span", { class: "day", "data-day": day }, `── ${day} ─────────────────────────────────`);
}

function rebuildTimeline(events) {
  const nodes = [];
  let day = null;
  timeline.lines = 0;
  for (let i = events.length - 1; i >= 0 && timeline.lines < TIMELINE_LINES; i--) {
    const e = events[i];
    if (!e.story) continue;
    if (e.day !== day) nodes.push(dayLine(day = e.day));
    nodes.push(timelineLine(e));
    timeline.lines++;
  }
  $("timeline").replaceChildren(...nodes);
}

function prependTimeline(e) {
  if (!e.story) return;
  const node = $("timeline");
  if (node.firstElementChild?.dataset.day === e.day) node.firstElementChild.after(timelineLine(e));
  else node.prepend(dayLine(e.day), timelineLine(e));
  // The oldest line goes, and its day's header with it when it was that day's last.
  if (++timeline.lines > TIMELINE_LINES) {
    node.lastElementChild.remove();
    timeline.lines--;
    if (node.lastElementChild?.classList.contains("day")) node.lastElementChild.remove();
  }
}

const bus = { matching: 0 };
function busMatches(e) {
  const prefix = $("prefix").value.trim(), sender = $("plugin").value;
  return (!prefix || e.topic.startsWith(prefix)) && (!sender || e.source === sender);
}

function eventJSON(e) {
  const envelope = { seq: e.seq, time: e.time, topic: e.topic, source: e.source, corr: e.corr, deadline: e.deadline, body: e.body };
  // The JSON stays as the bus carries it (copied, it is the envelope); its instants are read out beside it.
  const times = epochFields(envelope).map(([path, ms]) => `${path} ${exactZoned(ms)}`).join(" · ");
  return el("div", { class: "event-detail" },
    times ? el("p", { class: "mono event-times", "data-testid": "event-times" }, times) : null,
    el("pre", { "data-testid": "event-json" }, JSON.stringify(envelope, null, 2)));
}

/// The envelope's instants: numbers of epoch milliseconds (2001–2100) under keys that name a time, with their paths.
function epochFields(value, path = "", found = []) {
  if (value && typeof value === "object") {
    for (const [key, inner] of Object.entries(value)) {
      const at = Array.isArray(value) ? `${path}[${key}]` : path ? `${path}.${key}` : key;
      if (typeof inner === "number" && inner >= 978307200000 && inner < 4102444800000
          && /(time|at|until|deadline|since|start|end|expires|fired|due)$/i.test(Array.isArray(value) ? path : key)) found.push([at, inner]);
      else epochFields(inner, at, found);
    }
  }
  return found;
}

/// An instant on the device's wall clock, to the millisecond, with its zone: `Mon 24 Nov 07:05:00.120 CET`.
function exactZoned(time) {
  const zone = studio.connection?.timeZone || "UTC";
  return new Intl.DateTimeFormat("en-GB", { timeZone: zone, weekday: "short", day: "2-digit", month: "short", hour: "2-digit",
    minute: "2-digit", second: "2-digit", fractionalSecondDigits: 3, timeZoneName: "short" }).format(new Date(time));
}

/// A bus line: `index` is the event's place in the page's list (a restarted broker may number afresh, so seqs repeat).
function busLine(e, index) {
  const open = studio.open.has(index);
  const linked = e.corr !== undefined && e.corr === studio.linkedCorr;
  return el("li", { class: [open ? "open" : "", linked ? "linked" : ""].join(" ").trim(), "data-topic": e.topic, "data-source": e.source,
    "data-seq": e.seq, "data-index": index, "data-corr": e.corr, title: e.corr ? "Click for the JSON and its request or reply" : "Click for the JSON" },
    e.tap, open ? eventJSON(e) : null);
}

/// `base`: the index of `events[0]` (live: the events let go before it).
function rebuildBus(events, base = 0) {
  const rows = [];
  bus.matching = 0;
  for (let i = events.length - 1; i >= 0; i--) {
    if (!busMatches(events[i])) continue;
    // A journal's events carry their index in the journal; live, it is their place in the page's list.
    if (++bus.matching <= BUS_LINES) rows.push(busLine(events[i], events[i].index ?? base + i));
  }
  $("bus").replaceChildren(...rows);
}

function prependBus(e, index) {
  if (!busMatches(e)) return;
  const list = $("bus");
  list.prepend(busLine(e, index));
  if (++bus.matching > BUS_LINES) list.lastElementChild.remove();
}

function drawBusCount(total) {
  setText($("bus-count"), `${bus.matching} of ${total} events${bus.matching > BUS_LINES ? ` (newest ${BUS_LINES} shown)` : ""}`
    + (studio.dropped ? `; ${studio.dropped} older ones no longer kept (--keep-events)` : ""));
}

/// A journal's bus: the newest lines up to the instant shown (filtered, the server looked back so far for them).
function drawJournalBusCount() {
  const shown = journal.shown;
  if (shown.count < 0) return setText($("bus-count"), "");
  const filtered = shown.scanned !== null;
  setText($("bus-count"), `${bus.matching} ${filtered ? "matching " : ""}of the ${shown.count.toLocaleString("en")} events up to here`
    + (filtered && !shown.complete ? ` (the newest ${BUS_LINES} within the last ${shown.scanned.toLocaleString("en")})` : ""));
}

function addSender(source) {
  if (studio.senders.has(source)) return;
  studio.senders.add(source);
  const select = $("plugin");
  const after = [...select.options].slice(1).find((option) => option.value > source);
  select.insertBefore(el("option", { value: source }, source), after ?? null);
}

// MARK: The state and the plugins

function drawState(model) {
  const groupRows = [];
  for (const group of Object.keys(model.groups).sort()) {
    for (const key of Object.keys(model.groups[group]).sort()) {
      const entry = model.groups[group][key];
      const writers = (entry.writers ?? [entry.writer]).filter((w) => w !== "shieldbus");
      const writer = writers.length > 1 ? { text: `${entry.writer} (also ${writers.filter((w) => w !== entry.writer).join(", ")})`, class: "warn" } : entry.writer;
      groupRows.push({ key: `${group}/${key}`, cells: [{ text: key, class: "mono" }, storedValue(entry), writer, `v${entry.version}`, (entry.clock ?? "").slice(0, 8)] });
    }
  }
  drawTable($("groups"), ["key", "value", "writer", "version", "written"], groupRows);
  drawTable($("stores"), ["store", "shields", "writer", "changed"], Object.keys(model.stores).sort().map((name) => {
    const store = model.stores[name];
    const shield = store.shield;
    const categories = shield.applicationCategories?.policy === "all" ? "all categories" : `${shield.applicationCategories?.categories?.length ?? 0} categories`;
    const what = `${shield.applications?.length ?? 0} apps, ${categories}, ${shield.webDomains?.length ?? 0} domains`;
    return { key: name, cells: [{ text: name, class: "mono" }, what, store.writer, (store.clock ?? "").slice(0, 8)] };
  }));
  const now = model.time ?? 0;
  drawTable($("schedules"), ["activity", "interval", "next start", "next end"], model.schedules.map((s) => {
    const current = s.intervals.find((i) => i.end > now);
    const nextStart = s.intervals.find((i) => i.start > now)?.start;
    return { key: s.activity, cells: [{ text: s.activity, class: "mono" }, `${s.start}–${s.end}${s.repeats ? " daily" : " once"}`,
      nextStart ? zoned(nextStart) : "—", current ? zoned(current.end) : "—"] };
  }));
}

/// A key's value cell: the value (read from the store while its version was current) and what changed since the last
/// version whose value was read.
function storedValue(entry) {
  if (!entry.known) {
    return { text: "—", class: "muted", title: "Not read: the Studio reads a value from the store while its version is current (live only)" };
  }
  const text = JSON.stringify(entry.value);
  // An instant changed is read out as the line under the value reads it, not as the number it is stored as.
  const show = (value, limit) => (instantMilliseconds(value) !== null ? exactZoned(instantMilliseconds(value)) : shortJSON(value, limit));
  const since = entry.previous ? `since v${entry.previous.version}: ${describeChange(entry.previous.value, entry.value, show)}` : null;
  // Its instants read out on the device's clock, as an event's are beside its JSON (the raw number stays the value).
  const when = storedInstants(entry.value).map(([path, ms]) => (path ? `${shortText(path, 16)}: ` : "") + exactZoned(ms)).join(" · ");
  return { text: shortText(text, 60), class: "mono value", title: text, when: when || null, note: since, testid: "stored-value" };
}

/// A stored value's instants, with their paths in it ("" for the value itself): numbers in 2001–2100 as seconds since
/// 1970 (what an app stores from `timeIntervalSince1970`) or as milliseconds. A count or a version never comes near.
function storedInstants(value, path = "", found = []) {
  if (typeof value === "number") {
    if (instantMilliseconds(value) !== null) found.push([path, instantMilliseconds(value)]);
  } else if (value && typeof value === "object") {
    for (const [key, inner] of Object.entries(value)) storedInstants(inner, Array.isArray(value) ? `${path}[${key}]` : path ? `${path}.${key}` : key, found);
  }
  return found;
}

/// A stored number as the instant it holds, in milliseconds since 1970 (`storedInstants`' rule); null when it holds none.
function instantMilliseconds(value) {
  if (typeof value !== "number") return null;
  if (value >= 978307200 && value < 4102444800) return Math.round(value * 1000);
  if (value >= 978307200000 && value < 4102444800000) return value;
  return null;
}

function zoned(time) {
  const zone = studio.connection?.timeZone || "UTC";
  return new Intl.DateTimeFormat("en-GB", { timeZone: zone, month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit" }).format(new Date(time));
}

function drawPlugins(model) {
  const live = studio.index === null && studio.status;
  // The supervised plugins; taps and tools (the Studio itself among them) come and go and are not plugins.
  const plugins = live ? (studio.status.plugins || []).filter((p) => p.supervised).map((p) => ({
    name: p.name, state: p.connected ? (p.state || "running") : (p.state || "gone"), restarts: p.restarts ?? 0, lag: p.lag ?? 0,
  })) : Object.values(model.plugins);
  const failed = (name) => {
    const calls = model.failedCalls[name] ?? [], count = model.failedCounts?.[name] ?? calls.length;
    return count ? { text: String(count), class: "warn", title: calls.map((c) => `${c.call}: ${c.message}`).join("\n") } : "0";
  };
  drawTable($("plugins"), ["plugin", "state", "restarts", "lag", "failed calls"], plugins.map((p) => ({ key: p.name, cells: [p.name,
    { text: p.state === "running" ? "up" : p.state, pill: p.state }, String(p.restarts ?? 0), p.lag === undefined ? "—" : String(p.lag), failed(p.name)] })));
}
