// ShieldBus Studio's page, a recorded journal: read once as it loads (its progress shown), folded into a model kept
// every `journal.every` events — never the events themselves — then each instant is the nearest kept model folded on
// with the events after it, asked of the server, which reads them back from the file. So a year's journal costs the
// page a few hundred small models. Markers along the slider for shields, blocks, unlocks, errors, clock controls and
// the checker's violations, the next or previous one of each, moving by time as well as by event, zoom, and the
// checker's account beside the phone.
"use strict";

const MARKER_COLORS = { SHIELD: "#d946ef", BLOCK: "#d7261b", UNBLOCK: "#1f9d46", ERROR: "#f97316", clock: "#b86e00", VIOLATION: "#7c3aed" };
const MARKER_NAMES = { SHIELD: "shield", BLOCK: "block", UNBLOCK: "unlock", ERROR: "error", clock: "clock control", VIOLATION: "violation" };
/// The fewest events a zoomed timeline spans.
const MIN_SPAN = 20;
/// The timeline's lines at an instant of a journal (the newest; each is read back from the file).
const JOURNAL_TIMELINE_LINES = 300;

const journal = {
  /// `places`: the count to stand just after each event the server was asked to find (violations, `--at`), by seq.
  total: null, openAt: null, counts: {}, first: null, places: {},
  /// A model is kept every `every` events (500, more past 250,000 events: at most about 500 models);
  /// `checkpoints[k]` is the model after the first k × every events.
  every: 500, checkpoints: [], loading: null, loaded: 0, ready: false,
  /// An instant the person chose while the journal was loading, shown once it has loaded that far.
  wanted: null,
  /// The checker's violations: the seqs they begin after, and once loaded, where they are (counts of events shown).
  violationSeqs: [], violations: [],
  /// The stretch the slider and the markers show (zoom), as counts of events.
  view: { from: 0, to: 0 },
  /// The instant shown: its model, the events before it for the bus (`recent`, or the filtered `busEvents`) and the
  /// timeline's lines; `cache` is the model last folded, to go on from when the next instant is just after it.
  shown: { count: -1, model: null, recent: [], busEvents: [], stories: [], scanned: null, complete: true },
  /// The count of the instant last drawn (playback waits for it before it goes on).
  drawnCount: -1,
  cache: null, ticket: 0,
};

function startJournal(hello) {
  Object.assign(journal, { total: hello.total ?? 0, openAt: hello.at ?? null, counts: hello.marks || {}, places: hello.places || {}, first: null, loaded: 0, ready: false, wanted: null,
    every: 500 * Math.max(1, Math.ceil((hello.total ?? 0) / 250_000)), checkpoints: [emptyModel()], loading: emptyModel(),
    violations: [], cache: null, drawnCount: -1, shown: { count: -1, model: emptyModel(), recent: [], busEvents: [], stories: [], scanned: null, complete: true } });
  journal.view = { from: 0, to: journal.total };
  $("slider").min = 0;
  $("slider").max = journal.total;
  $("slider").value = 0;
  studio.index = 0;
  // Where `--at` is, when the server found it as it read the journal: the page goes there once it has loaded that far.
  const place = journal.openAt === null ? undefined : journal.places[journal.openAt];
  if (place !== undefined) {
    journal.wanted = place;
    $("slider").value = place;
  }
  if (hello.account) showAccount(hello.account);
}

/// An event of the journal as it loads: folded into the running model, which is kept every `journal.every` events.
function noteJournalEvent(event) {
  journal.first ??= event;
  apply(journal.loading, event);
  journal.loaded += 1;
  if (journal.loaded % journal.every === 0) journal.checkpoints[journal.loaded / journal.every] = copyModel(journal.loading);
  if (journal.loaded === journal.total) journalLoaded();
  else if (journal.wanted === journal.loaded) {
    if (journal.openAt !== null && journal.places[journal.openAt] === journal.wanted) openAtEvent(journal.openAt, journal.wanted);
    else showJournalUpTo(journal.wanted);
  }
}

async function journalLoaded() {
  journal.loading = null;
  journal.ready = true;
  // Where the checker's violations are, for their markers and ‹ › (the server found them as it read the journal).
  journal.violations = [...new Set(journal.violationSeqs.map((seq) => journal.places[seq]).filter((c) => c !== undefined))].sort((a, b) => a - b);
  markersDrawn = null;
  const seq = journal.openAt;
  // An instant the person chose while it loaded wins; else the event `--at` named (when the page has not gone there
  // while loading), else the end.
  if (seq !== null && (journal.wanted === null || journal.wanted === journal.places[seq])) {
    const count = journal.places[seq] ?? (await ask("seek", { seq })).count;
    if (count !== null) return openAtEvent(seq, count);
    journal.openAt = null;
    showJournalUpTo(journal.total);
    return note(`the journal has no event #${seq}`);
  }
  journal.openAt = null;
  showJournalUpTo(journal.wanted ?? journal.total);
}

/// Stands just after the event `--at` named (a violation `shieldbus check` pointed to, or the checker's first), and
/// says so: as soon as the journal has loaded that far, not once all of it has — a long journal loads on meanwhile.
async function openAtEvent(seq, count) {
  journal.openAt = null;
  await showJournalUpTo(count);
  const violation = document.querySelector(`#verdicts .violation[data-at="${seq}"]`);
  setText($("seek-note"), `opened at #${seq}${violation ? ": the checker's violation begins after it" : ""}`);
}

/// A question to the server about the journal (`/api/journal/NAME?…`), its JSON answer.
async function ask(name, query) {
  const response = await fetch(`/api/journal/${name}?${new URLSearchParams(query)}`);
  const answer = await response.json();
  if (!response.ok) throw new Error(answer.error?.message ?? response.statusText);
  return answer;
}

/// The events `from`..<`to`, exactly as the page would have folded them, in pieces the server takes.
async function eventsBetween(from, to) {
  const asks = [];
  for (let start = from; start < to; start += 5000) asks.push(ask("events", { from: start, to: Math.min(to, start + 5000) }));
  return (await Promise.all(asks)).flatMap((a) => a.events);
}

/// Shows the journal up to `count` events (the latest call wins); the slider's stretch follows when it falls outside.
async function showJournalUpTo(count) {
  count = Math.max(0, Math.min(count, journal.total));
  studio.index = count;
  if (!journal.ready) {
    // Not loaded that far yet: shown once it is (noteJournalEvent).
    journal.wanted = count;
    $("slider").value = count;
    if (count > journal.loaded) return;
  }
  const view = journal.view, span = view.to - view.from;
  if (count < view.from || count > view.to) {
    const from = Math.max(0, Math.min(journal.total - span, count - Math.round(span / 2)));
    setView(from, from + span);
  }
  $("slider").value = count;
  const ticket = ++journal.ticket;
  const cache = journal.cache;
  // From the model last folded when this instant is a little after it (playing, stepping), else from a checkpoint.
  const extend = cache && cache.count <= count && count - cache.count <= BUS_LINES && journal.shown.count === cache.count;
  const near = cache && cache.count <= count && count - cache.count < journal.every;
  const base = near ? cache.count : Math.floor(count / journal.every) * journal.every;
  const model = copyModel(near ? cache.model : journal.checkpoints[base / journal.every]);
  const from = extend ? cache.count : Math.max(0, Math.min(base, count - BUS_LINES));
  const filtered = $("prefix").value.trim() || $("plugin").value;
  try {
    const [events, stories, bus] = await Promise.all([
      eventsBetween(from, count),
      ask("lines", { before: count, limit: JOURNAL_TIMELINE_LINES, story: 1 }),
      filtered ? ask("lines", { before: count, limit: BUS_LINES, prefix: $("prefix").value.trim(), source: $("plugin").value }) : null,
    ]);
    if (ticket !== journal.ticket) return;
    for (const event of events.slice(base - from)) apply(model, event);
    journal.cache = { count, model: copyModel(model) };
    const recent = (extend ? [...journal.shown.recent, ...events] : events).slice(-BUS_LINES);
    journal.shown = { count, model, recent, stories: stories.events, busEvents: bus ? bus.events : recent, scanned: bus?.scanned ?? null,
      complete: bus?.complete ?? true };
    redrawJournal();
  } catch (error) {
    if (ticket === journal.ticket) note(`${error.message}`);
  }
}

function redrawJournal() {
  pending.rebuild = true;
  scheduleDraw();
}

/// The instant shown, the loading progress, then the journal's size; and the markers.
function drawJournal() {
  if (studio.mode !== "journal") return;
  const loaded = journal.loaded, total = journal.total;
  setText($("loading"), !journal.ready ? `loading ${loaded.toLocaleString("en")} of ${total.toLocaleString("en")} events…`
    : `${total.toLocaleString("en")} events`);
  $("loading").dataset.loaded = String(journal.ready);
  const last = journal.shown.recent[journal.shown.recent.length - 1];
  if (journal.shown.count >= 0) {
    setText($("instant"), last && journal.shown.count > 0 ? `${last.day} ${last.clock}  #${last.seq}  (${journal.shown.count}/${total})` : "before the first event");
    journal.drawnCount = journal.shown.count;
  }
  drawMarkers();
  drawZoom();
  markViolationHere();
}

// MARK: The checker's account

/// The checker's account (`shieldbus check`'s verdicts over the journal) beside the phone: each product's verdict, and
/// each violation — its kind, what broke and who last decided — with a button to the event it begins after.
function showAccount(account) {
  $("checker").hidden = false;
  document.querySelector("#scrubber .seek.VIOLATION").hidden = false;
  const items = [];
  const seqs = [];
  for (const product of account.products) {
    const broken = product.violations.length;
    items.push(el("li", { class: "verdict " + (product.held ? "held" : "broken"), "data-testid": "verdict" },
      product.held ? `${product.product}: promise held` : product.modelFailure ? `${product.product}: not judged — ${product.modelFailure}`
        : `${product.product}: promise BROKEN, ${broken} violation${broken === 1 ? "" : "s"}`));
    for (const violation of product.violations) {
      if (violation.at !== undefined) seqs.push(violation.at);
      items.push(el("li", { class: "violation", "data-testid": "violation", "data-at": violation.at ?? "" },
        el("span", { class: "kind" }, violation.kind),
        el("span", { "data-testid": "violation-description" }, violation.description),
        el("span", { class: "muted" }, `the stores last written by ${violation.decidedBy}`),
        violation.at === undefined ? null : el("button", { type: "button", "data-testid": "violation-go", onclick: () => goToSeq(violation.at) },
          `Go to #${violation.at}`)));
    }
  }
  journal.violationSeqs = [...new Set(seqs)];
  $("verdicts").replaceChildren(...items);
}

/// To just after the event with this seq.
async function goToSeq(seq) {
  if (!journal.ready) return note("still loading the journal");
  const count = journal.places[seq] ?? (await ask("seek", { seq })).count;
  if (count === null) return note(`the journal has no event #${seq}`);
  note("");
  showJournalUpTo(count);
}

/// The violation that begins just after the instant shown stands out.
function markViolationHere() {
  const recent = journal.shown.recent;
  const shown = journal.shown.count > 0 ? recent[recent.length - 1] : null;
  for (const item of document.querySelectorAll("#verdicts .violation")) item.classList.toggle("here", !!shown && item.dataset.at === String(shown.seq));
}

// MARK: Markers and zoom

let markersDrawn = null, markerTicket = 0;
/// One canvas, a lane per kind: a tick per column of the stretch shown that holds such an event (the server tells
/// which; the page never holds the journal's events).
async function drawMarkers() {
  const canvas = $("markers");
  const width = canvas.clientWidth, { from, to } = journal.view;
  const signature = `${from}-${to}/${width}/${journal.ready}/${journal.violations.length}`;
  if (!width || !journal.ready || to <= from || signature === markersDrawn) return;
  markersDrawn = signature;
  const ticket = ++markerTicket;
  const columns = Math.max(1, Math.round(width));
  let marks;
  try { marks = await ask("marks", { from, to, columns }); } catch (error) { return note(error.message); }
  if (ticket !== markerTicket) return;
  marks.VIOLATION = journal.violations.filter((c) => c - 1 >= from && c - 1 < to).map((c) => Math.floor((c - 1 - from) * columns / (to - from)));
  canvas.width = Math.round(width * devicePixelRatio);
  canvas.height = Math.round(14 * devicePixelRatio);
  const context = canvas.getContext("2d");
  context.scale(devicePixelRatio, devicePixelRatio);
  Object.keys(MARKER_COLORS).forEach((kind, lane) => {
    context.fillStyle = MARKER_COLORS[kind];
    for (const column of marks[kind] ?? []) context.fillRect(Math.min(column, width - 2), lane * 2.3, 2, 2);
    canvas.dataset[kind.toLowerCase()] = String(kind === "VIOLATION" ? journal.violations.length : journal.counts[kind] ?? 0);
  });
  Object.assign(canvas.dataset, { from: String(from), to: String(to) });
}

function setView(from, to) {
  journal.view = { from, to };
  $("slider").min = from;
  $("slider").max = to;
  $("slider").value = studio.index;
}

/// Zooms the slider's stretch by `factor` (½: in, 2: out) around the instant shown; `null`: the whole journal.
function zoom(factor) {
  if (studio.mode !== "journal" || !journal.ready) return;
  const total = journal.total;
  const span = factor === null ? total : Math.max(Math.min(MIN_SPAN, total), Math.min(total, Math.round((journal.view.to - journal.view.from) * factor)));
  const from = Math.max(0, Math.min(total - span, studio.index - Math.round(span / 2)));
  setView(from, from + span);
  scheduleDraw();
}

function drawZoom() {
  const { from, to } = journal.view, total = journal.total ?? 0;
  const whole = from === 0 && to === total;
  setText($("zoom-level"), whole ? "whole journal" : `events ${(from + 1).toLocaleString("en")}–${to.toLocaleString("en")} (×${(total / Math.max(1, to - from)).toFixed(1)})`);
  $("zoom-out").disabled = whole;
  $("zoom-fit").disabled = whole;
  $("zoom-in").disabled = to - from <= Math.min(MIN_SPAN, total);
}

// MARK: Seeking

/// To the next (`step` 1) or previous (-1) event of `kind` from the one shown last.
async function seekKind(kind, step) {
  if (!journal.ready) return note("still loading the journal");
  let count;
  if (kind === "VIOLATION") {
    const list = journal.violations;
    count = step > 0 ? list.find((c) => c > studio.index) : [...list].reverse().find((c) => c < studio.index);
    count ??= null;
  } else {
    count = (await ask("seek", { kind, step, count: studio.index })).count;
  }
  if (count === null) return note(`no ${step > 0 ? "next" : "previous"} ${MARKER_NAMES[kind]}`);
  note("");
  showJournalUpTo(count);
}

/// To a time: `+1h`, `-10m`, `+90s` from the instant shown, or `07:30` (the next 07:30 in the journal's zone).
async function seekTime(text) {
  if (!journal.ready) return note("still loading the journal");
  // The event shown last, asked for: the instant being drawn may not have come back yet.
  const current = studio.index > 0 ? (await ask("events", { from: studio.index - 1, to: studio.index })).events[0] : journal.first;
  if (!current) return;
  const relative = /^([+-])(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$/.exec(text.trim());
  const clock = /^(\d{1,2}):(\d{2})(?::(\d{2}))?$/.exec(text.trim());
  if (relative && (relative[2] || relative[3] || relative[4])) {
    const ms = ((Number(relative[2] ?? 0) * 60 + Number(relative[3] ?? 0)) * 60 + Number(relative[4] ?? 0)) * 1000;
    const { count } = await ask("seek", { time: current.time + (relative[1] === "-" ? -ms : ms) });
    note("");
    return showJournalUpTo(count);
  }
  if (clock && Number(clock[1]) < 24 && Number(clock[2]) < 60) {
    const { count } = await ask("seek", { local: text.trim(), count: studio.index });
    if (count === null) return note(`the journal ends before the next ${text.trim()}`);
    note("");
    return showJournalUpTo(count);
  }
  note("go to +1h, -10m, +90s or 07:30");
}

function note(text) {
  setText($("seek-note"), text);
  $("seek-note").className = text ? "result error" : "result";
}

document.querySelector("#scrubber .seeks").addEventListener("click", (event) => {
  const button = event.target.closest("[data-seek]");
  if (button) seekKind(button.dataset.seek, Number(button.dataset.step));
});
$("seek").addEventListener("click", () => seekTime($("seek-time").value));
$("seek-time").addEventListener("keydown", (event) => { if (event.key === "Enter") seekTime($("seek-time").value); });
$("markers").addEventListener("click", (event) => {
  const box = $("markers").getBoundingClientRect();
  const { from, to } = journal.view;
  showJournalUpTo(from + Math.round((event.clientX - box.left) / box.width * (to - from)));
});
$("zoom-in").addEventListener("click", () => zoom(0.5));
$("zoom-out").addEventListener("click", () => zoom(2));
$("zoom-fit").addEventListener("click", () => zoom(null));
// + and − zoom, 0 shows the whole journal: wherever the focus is but in a text field.
addEventListener("keydown", (event) => {
  if (studio.mode !== "journal" || event.ctrlKey || event.metaKey || event.altKey) return;
  const typing = event.target.closest?.("input:not([type=range]), select, textarea");
  if (typing) return;
  const action = { "+": () => zoom(0.5), "=": () => zoom(0.5), "-": () => zoom(2), "0": () => zoom(null) }[event.key];
  if (action) { event.preventDefault(); action(); }
});
addEventListener("resize", () => { if (studio.mode === "journal") drawMarkers(); });
