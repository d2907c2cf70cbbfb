// ShieldBus Studio's page: the feed from the Studio's server, the person's actions, and drawing once a frame at most
// (the model is studio-model.js's, the drawing studio-draw.js's).
"use strict";

const $ = (id) => document.getElementById(id);
/// Live, `events` are the newest `keep` events (the server's --keep-events), `base` the index of the first: a page left
/// open for months holds no more than the server does.
const studio = { mode: "live", apps: [], events: [], base: 0, keep: 20000, dropped: 0, status: null, connection: null, index: null,
  controls: [], open: new Set(), senders: new Set(), dismissed: new Set(), bannerSince: new Map(), busClock: null, linkedCorr: null };

let liveModel = emptyModel();

/// The model at the instant shown: the live one, or the journal's at the slider (studio-journal.js folds it).
function currentModel() {
  return studio.mode === "journal" ? journal.shown.model ?? emptyModel() : liveModel;
}

/// A bus line's event by its index: live, in the page's list; replaying, among those the instant shown fetched.
function eventByIndex(index) {
  if (studio.mode !== "journal") return studio.events[index - studio.base];
  return journal.shown.busEvents.find((e) => e.index === index) ?? journal.shown.recent.find((e) => e.index === index);
}

// MARK: Drawing, once per frame at most

const pending = { events: [], rebuild: true };

function draw() {
  const model = currentModel();
  const fresh = pending.events;
  pending.events = [];
  // Live, new events are added to the lists; a filter, a new instant of a journal or a new page draws them again.
  const rebuild = pending.rebuild || (studio.mode !== "journal" && fresh.length > BUS_LINES);
  pending.rebuild = false;
  if (studio.mode === "journal") {
    if (rebuild) {
      rebuildTimeline(journal.shown.stories);
      rebuildBus(journal.shown.busEvents);
    }
    drawJournalBusCount();
  } else {
    if (rebuild) {
      rebuildTimeline(studio.events);
      rebuildBus(studio.events, studio.base);
    } else {
      for (const index of fresh) {
        const event = studio.events[index - studio.base];
        if (!event) continue;  // let go already (--keep-events)
        prependTimeline(event);
        prependBus(event, index);
      }
    }
    drawBusCount(studio.events.length);
  }
  drawPhone(model);
  drawBanner(model);
  drawNotifications(model);
  drawState(model);
  drawPlugins(model);
  drawClock();
  drawJournal();
}

let drawPending = false;
function scheduleDraw() {
  if (drawPending) return;
  drawPending = true;
  requestAnimationFrame(() => { drawPending = false; draw(); });
}

function redrawAll() {
  // A journal's filtered bus is asked of the server again.
  if (studio.mode === "journal") return journal.shown.count >= 0 && showJournalUpTo(studio.index);
  pending.rebuild = true;
  scheduleDraw();
}

// MARK: The person's actions: the same input requests as `shieldbus do`.

// The result line shows the latest action's answer: an earlier action answered later does not overwrite it.
let latestAction = 0;
// The person's actions reach the device in the order they were made: each is sent once the one before it was answered
// (two requests in flight may reach the Studio in either order: Home then an app would leave the phone at home).
let actionsSent = Promise.resolve();

async function act(action, value, extra = {}) {
  const result = $("action-result");
  if (studio.mode !== "live") { result.textContent = "a recorded journal is replayed, not acted on"; return; }
  const mine = ++latestAction;
  const show = (className, text) => { if (mine === latestAction) { result.className = className; result.textContent = text; } };
  show("result", `${action}${value ? " " + value : ""}…`);
  const answered = actionsSent.then(async () => {
    const response = await fetch("/api/input", { method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ action, value, ...extra }) });
    return response.json();
  });
  actionsSent = answered.catch(() => {});
  try {
    const answer = await answered;
    show(answer.ok ? "result" : "result error", answer.ok ? `done: ${action}${value ? " " + value : ""}` : `refused: ${answer.error.message}`);
  } catch (error) {
    show("result error", `no answer: ${error}`);
  }
}

// MARK: The bus clock: the same control requests as `shieldbus clock`.

/// What the page knows of the bus clock, from a status report or a `clock.changed` event: the newer by seq wins (a
/// status report asked before a control may arrive after its event).
function noteBusClock(state, seq) {
  if (studio.busClock && seq < studio.busClock.seq) return;
  studio.busClock = { clock: state.clock, paused: !!state.paused, speed: state.speed, time: state.time, seq, at: performance.now() };
}

async function steer(action, extra = {}) {
  const result = $("clock-result");
  result.className = "result";
  result.textContent = `${action}…`;
  try {
    const response = await fetch("/api/clock", { method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ action, ...extra }) });
    const answer = await response.json();
    result.className = answer.ok ? "result" : "result error";
    result.textContent = answer.ok ? `${action}: done` : `refused: ${answer.error.message}`;
  } catch (error) {
    result.className = "result error";
    result.textContent = `no answer: ${error}`;
  }
}

$("clockbar").addEventListener("click", (event) => {
  const button = event.target.closest("[data-clock]");
  if (!button || button.disabled) return;
  const action = button.dataset.clock;
  if (action === "speed") steer("speed", { speed: Number(button.dataset.speed) });
  else if (action === "jump") steer("jump", { to: $("jump-to").value });
  else steer(action);
});
$("jump-to").addEventListener("keydown", (event) => { if (event.key === "Enter") steer("jump", { to: $("jump-to").value }); });
// The bus time shown runs on between reports; only its text changes.
setInterval(() => { if (studio.busClock && !studio.busClock.paused) drawClock(); }, 250);

$("person").addEventListener("click", (event) => {
  const button = event.target.closest("[data-action]");
  const action = button?.dataset.action;
  if (!action) return;
  const tab = Number($("tab").value) || 1;
  if (action === "habit") act("habit", $("habit").value);
  else if (action === "visit") act("visit", $("url").value, { private: $("private").checked, tab });
  else if (action === "switch-tab" || action === "close-tab") act(action, undefined, { tab });
  else if (action === "app-action") {
    const control = studio.controls[Number($("app-control").value)];
    if (control) act(action, control.action, control.app ? { app: control.app } : {});
  }
  else if (button.dataset.with) act(action, $(button.dataset.with).value);
  else act(action, button.dataset.value);
});
$("home-indicator").addEventListener("click", () => act("home"));
// The person's actions as a scenario file: up to the instant shown (a journal), or all so far (live); a journal with
// none is said so, never an empty file.
$("save-scenario").addEventListener("click", async (event) => {
  event.preventDefault();
  const result = $("action-result");
  latestAction += 1;  // an action still waiting for its answer no longer writes over this line
  const query = studio.mode === "journal" ? `?count=${studio.index}` : "";
  try {
    const response = await fetch(`/api/scenario${query}`);
    if (!response.ok) throw new Error((await response.json()).error.message);
    const name = /filename="([^"]+)"/.exec(response.headers.get("Content-Disposition") ?? "")?.[1] ?? "shieldbus-scenario.yml";
    const link = el("a", { href: URL.createObjectURL(await response.blob()), download: name });
    document.body.append(link);
    link.click();
    link.remove();
    result.className = "result";
    result.textContent = `saved ${name}`;
  } catch (error) {
    result.className = "result error";
    result.textContent = `not saved: ${error.message}`;
  }
});
$("prefix").addEventListener("input", redrawAll);
$("plugin").addEventListener("change", redrawAll);
$("slider").addEventListener("input", () => showJournalUpTo(Number($("slider").value)));
// The line pressed is the line a click opens: a line that comes in above it between the press and the release moves
// it down, and the click then goes to the list (or to the line that moved under the pointer). Every press on the page
// is noted; a click without one (`detail` 0: the keyboard, a script) is where it is.
// A pointer that moved away from where it pressed is someone changing their mind: the click is where it ends.
let pressed = null;
document.addEventListener("pointerdown", (event) => {
  pressed = { row: event.target.closest("#bus li"), inJSON: !!event.target.closest("#bus .event-detail"), x: event.clientX, y: event.clientY };
}, true);
$("bus").addEventListener("click", (event) => {
  const here = { row: event.target.closest("li"), inJSON: !!event.target.closest(".event-detail") };
  const stayed = pressed && Math.hypot(event.clientX - pressed.x, event.clientY - pressed.y) <= 4;
  const press = event.detail > 0 && stayed && pressed.row?.isConnected ? pressed : here;
  pressed = null;
  const row = press.row;
  // A click in the JSON (or its times), or one that ends a text selection, is someone reading or copying: the line
  // stays open.
  if (!row || press.inJSON || !window.getSelection().isCollapsed) return;
  const index = Number(row.dataset.index);
  if (studio.open.delete(index)) row.querySelector(".event-detail")?.remove();
  else { studio.open.add(index); row.append(eventJSON(eventByIndex(index))); }
  row.classList.toggle("open", studio.open.has(index));
  // A request and its reply share a `corr`: opening one marks the other (closing it, the mark goes).
  if (row.dataset.corr) linkCorr(studio.open.has(index) ? row.dataset.corr : null);
});

function linkCorr(corr) {
  studio.linkedCorr = corr;
  for (const line of $("bus").children) line.classList.toggle("linked", !!corr && line.dataset.corr === corr);
}

// The banner: a tap taps the notification on the device; a swipe up or × only puts it away (it stays in the list).
let swipe = null;
$("banner").addEventListener("pointerdown", (event) => {
  swipe = event.target.closest(".close") ? null : { y: event.clientY, moved: 0 };
  if (swipe) $("banner").setPointerCapture(event.pointerId);
});
$("banner").addEventListener("pointermove", (event) => {
  if (!swipe) return;
  swipe.moved = Math.min(0, event.clientY - swipe.y);
  $("banner").style.transform = `translateY(${swipe.moved}px)`;
});
$("banner").addEventListener("pointerup", () => {
  $("banner").style.transform = "";
  if (swipe && swipe.moved < -24) { swipe.swiped = true; dismissBanner(); }
});
$("banner").addEventListener("click", (event) => {
  const swiped = swipe?.swiped;
  swipe = null;
  if (swiped) return;
  if (event.target.closest(".close")) dismissBanner();
  else if ($("banner").dataset.id) act("notification-tap", $("banner").dataset.id);
});

let playing = null;
$("play").addEventListener("click", () => {
  if (playing) { clearInterval(playing); playing = null; $("play").textContent = "▶"; return; }
  $("play").textContent = "❚❚";
  playing = setInterval(() => {
    if (!journal.ready || studio.index >= journal.total) { $("play").click(); return; }
    // The next event once the one before is drawn, on the page and not only folded (a slow answer is not overtaken,
    // nor an instant whose frame has not come yet: a busy or hidden page draws less often than it plays).
    if (journal.shown.count === studio.index && journal.drawnCount === studio.index) showJournalUpTo(studio.index + 1);
  }, 120);
});

// MARK: The feed

function receive(message) {
  switch (message.kind) {
    case "hello":
      studio.mode = message.mode;
      studio.keep = message.keep ?? studio.keep;
      studio.apps = message.apps;
      $("app").replaceChildren(...message.apps.map((app) => el("option", { value: app.name }, app.name)));
      // The controls of the products' own apps their promises name (skip tonight, start a session…).
      studio.controls = message.controls ?? [];
      $("app-control").replaceChildren(...studio.controls.map((control, index) =>
        el("option", { value: String(index) }, control.app ? `${control.app}: ${control.action}` : control.action)));
      $("app-controls").hidden = studio.controls.length === 0;
      // The habits the products' apps offer: suggested as the person types (the device refuses any other).
      $("habit-names").replaceChildren(...(message.habits ?? []).map((habit) => el("option", { value: habit })));
      if (message.habits?.length) $("habit").value = message.habits[0];
      $("clockbar").hidden = message.mode !== "live";
      if (message.mode === "journal") {
        startJournal(message);
        $("scrubber").hidden = false;
        for (const button of document.querySelectorAll("#person button")) button.disabled = true;
        $("export").title = "The journal replayed";
      }
      break;
    case "backlog":
      studio.dropped += message.dropped || 0;
      for (const event of message.events) addEvent(event);
      break;
    case "event": addEvent(message.event); break;
    case "status": {
      studio.status = message.status;
      const broker = message.status.broker;
      if (broker?.time) noteBusClock({ clock: broker.clock, paused: broker.clockPaused, speed: broker.clockSpeed, time: broker.time }, broker.seq ?? 0);
      break;
    }
    case "connection": {
      studio.connection = message.connection;
      studio.busClock = null;  // a broker (re)connected to: its clock is told afresh
      setText($("connection"), message.connection.message);
      $("connection").className = "connection " + (message.connection.connected ? "up" : "down");
      break;
    }
  }
  scheduleDraw();
}

function addEvent(event) {
  addSender(event.source);
  // A journal's events are folded as they load and not kept (studio-journal.js).
  if (studio.mode === "journal") return noteJournalEvent(event);
  pending.events.push(studio.base + studio.events.length);
  studio.events.push(event);
  // The oldest go in batches (a splice per event would copy the list each time).
  if (studio.events.length >= studio.keep + Math.min(1000, studio.keep)) {
    const gone = studio.events.length - studio.keep;
    studio.events.splice(0, gone);
    studio.base += gone;
    studio.dropped += gone;
  }
  apply(liveModel, event);
  if (event.topic === "clock.changed") noteBusClock(event.body, event.seq);
}

function connect() {
  const socket = new WebSocket(`ws://${location.host}/ws`);
  socket.onmessage = (message) => receive(JSON.parse(message.data));
  socket.onclose = () => {
    $("connection").textContent = "the Studio server went away; reconnecting…";
    $("connection").className = "connection down";
    setTimeout(() => {
      // The server sends everything again: start from nothing.
      Object.assign(studio, { events: [], base: 0, dropped: 0, index: null, open: new Set(), senders: new Set() });
      $("plugin").replaceChildren(el("option", { value: "" }, "every sender"));
      liveModel = emptyModel();
      pending.events = [];
      redrawAll();
      connect();
    }, 1000);
  };
}
// Once every script has run: the feed's first message (a journal's hello) needs studio-journal.js, which the parser
// may still be fetching when a socket opened from here is already answered.
addEventListener("DOMContentLoaded", connect);
