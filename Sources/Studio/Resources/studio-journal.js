// ShieldBus Studio's page, a recorded journal's timeline: its loading progress, markers along the slider for shields,
// blocks, unlocks, errors and clock controls, the next or previous one of each, and moving by time as well as by event.
"use strict";

const MARKER_COLORS = { SHIELD: "#d946ef", BLOCK: "#d7261b", UNBLOCK: "#1f9d46", ERROR: "#f97316", clock: "#b86e00" };
const MARKER_NAMES = { SHIELD: "shield", BLOCK: "block", UNBLOCK: "unlock", ERROR: "error", clock: "clock control" };

/// Where the events of each marked kind are (indices into studio.events, ascending), and how many events the journal
/// holds (from the server's hello).
const journalMarks = { byKind: Object.fromEntries(Object.keys(MARKER_COLORS).map((kind) => [kind, []])), total: null, openAt: null };

function noteJournalEvent(event, index) {
  const kind = event.story?.kind;
  if (kind in MARKER_COLORS) journalMarks.byKind[kind].push(index);
}

/// The loading progress, then the journal's size; and the markers.
function drawJournal() {
  if (studio.mode !== "journal") return;
  const loaded = studio.events.length, total = journalMarks.total;
  const loading = $("loading");
  setText(loading, total !== null && loaded < total ? `loading ${loaded.toLocaleString("en")} of ${total.toLocaleString("en")} events…`
    : `${loaded.toLocaleString("en")} events`);
  loading.dataset.loaded = String(total !== null && loaded >= total);
  if (journalMarks.openAt !== null && total !== null && loaded >= total) openAtSeq();
  drawMarkers();
}

/// Once loaded, the page goes to the event `--at` named (a violation `shieldbus check` pointed to), once.
function openAtSeq() {
  const seq = journalMarks.openAt;
  journalMarks.openAt = null;
  const index = studio.events.findIndex((e) => e.seq === seq);
  if (index < 0) return note(`the journal has no event #${seq}`);
  showJournalUpTo(index + 1);
  setText($("seek-note"), `opened at #${seq}`);
}

let markersDrawn = null;
/// One canvas, a lane per kind: a tick per marked event at its place along the slider (bounded DOM, however long).
function drawMarkers() {
  const canvas = $("markers");
  const width = canvas.clientWidth;
  const signature = `${studio.events.length}/${width}`;
  if (!width || signature === markersDrawn) return;
  markersDrawn = signature;
  canvas.width = Math.round(width * devicePixelRatio);
  canvas.height = Math.round(12 * devicePixelRatio);
  const context = canvas.getContext("2d");
  context.scale(devicePixelRatio, devicePixelRatio);
  const total = Math.max(1, journalMarks.total ?? studio.events.length);
  Object.entries(journalMarks.byKind).forEach(([kind, indices], lane) => {
    context.fillStyle = MARKER_COLORS[kind];
    for (const index of indices) context.fillRect(Math.floor((index + 1) / total * (width - 2)), lane * 2.4, 2, 2);
    canvas.dataset[kind.toLowerCase()] = String(indices.length);
  });
}

/// Shows the journal up to `count` events.
function showJournalUpTo(count) {
  studio.index = Math.max(0, Math.min(count, studio.events.length));
  $("slider").value = studio.index;
  scheduleDraw();
}

/// The first index in the ascending `list` for which `isAfter` holds (`list.length` when none does).
function firstWhere(length, isAfter) {
  let low = 0, high = length;
  while (low < high) {
    const middle = (low + high) >> 1;
    if (isAfter(middle)) high = middle; else low = middle + 1;
  }
  return low;
}

/// To the next (`step` 1) or previous (-1) event of `kind` from the one shown last.
function seekKind(kind, step) {
  const indices = journalMarks.byKind[kind], shownLast = studio.index - 1;
  const at = step > 0 ? firstWhere(indices.length, (i) => indices[i] > shownLast) : firstWhere(indices.length, (i) => indices[i] >= shownLast) - 1;
  const target = indices[at];
  if (target === undefined) return note(`no ${step > 0 ? "next" : "previous"} ${MARKER_NAMES[kind]}`);
  note("");
  showJournalUpTo(target + 1);
}

/// To a time: `+1h`, `-10m`, `+90s` from the instant shown, or `07:30` (the next 07:30 in the journal's zone).
function seekTime(text) {
  const events = studio.events;
  const current = events[Math.max(0, studio.index - 1)];
  if (!current) return;
  const relative = /^([+-])(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$/.exec(text.trim());
  const clock = /^(\d{1,2}):(\d{2})(?::(\d{2}))?$/.exec(text.trim());
  if (relative && (relative[2] || relative[3] || relative[4])) {
    const ms = ((Number(relative[2] ?? 0) * 60 + Number(relative[3] ?? 0)) * 60 + Number(relative[4] ?? 0)) * 1000;
    const target = current.time + (relative[1] === "-" ? -ms : ms);
    note("");
    return showJournalUpTo(firstWhere(events.length, (i) => events[i].time > target));
  }
  if (clock && Number(clock[1]) < 24 && Number(clock[2]) < 60) {
    const wall = `${clock[1].padStart(2, "0")}:${clock[2]}:${clock[3] ?? "00"}.999`;
    const key = (e) => `${e.day} ${e.clock}`;
    let day = current.day;
    if (`${day} ${wall}` < key(current)) {
      const next = events.slice(studio.index).find((e) => e.day > current.day);
      if (!next) return note(`the journal ends before the next ${text.trim()}`);
      day = next.day;
    }
    note("");
    return showJournalUpTo(firstWhere(events.length, (i) => key(events[i]) > `${day} ${wall}`));
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
  const total = journalMarks.total ?? studio.events.length;
  showJournalUpTo(Math.round((event.clientX - box.left) / box.width * total));
});
addEventListener("resize", () => { if (studio.mode === "journal") drawMarkers(); });
