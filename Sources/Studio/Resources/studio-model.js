// ShieldBus Studio's page, its model: what the device showed and held after a prefix of the bus's events, folded from
// the events alone, so a live broker and a recorded journal draw the same way.
"use strict";

/// How many notifications not yet tapped are listed (the newest).
const LISTED_NOTIFICATIONS = 20;
/// How many of a plugin's failed calls are told (the newest; all are counted).
const LISTED_FAILED_CALLS = 20;

function emptyModel() {
  return { foreground: { kind: "home" }, shield: null, groups: {}, stores: {}, schedules: [], notifications: [], plugins: {}, failedCalls: {}, failedCounts: {},
    time: null, clock: null };
}

/// A copy of `model` to keep, or to fold on from: what `apply` changes in place (a group's keys, the stores' and the
/// plugins' maps, the failed calls) is copied; what it only ever replaces (a key's entry, a store, the foreground, the
/// shield, the notifications, the schedules) is shared. So the models a journal keeps hold each App-Group entry once,
/// not once a model: a year's journal leaves a key a day (`habits.2026-11-23`), and hundreds of models.
function copyModel(model) {
  const copied = (map, copy) => Object.fromEntries(Object.entries(map).map(([name, value]) => [name, copy(value)]));
  return { ...model, groups: copied(model.groups, (group) => ({ ...group })), stores: { ...model.stores },
    plugins: copied(model.plugins, (plugin) => ({ ...plugin })), failedCalls: copied(model.failedCalls, (calls) => [...calls]),
    failedCounts: { ...model.failedCounts } };
}

/// Folds one event into `model`: in place, changing only what `copyModel` copies.
function apply(model, event) {
  const body = event.body || {};
  model.time = event.time;
  model.clock = event.clock;
  switch (event.topic) {
    case "activity.app.opened":
      model.foreground = { kind: "app", name: body.application?.localizedDisplayName ?? "?" };
      model.shield = null;
      break;
    case "activity.web.visited":
      model.foreground = { kind: "web", domain: body.webDomain?.domain ?? "?", url: body.url, tab: body.tab, private: !!body.isPrivate };
      model.shield = null;
      break;
    case "device.restarted":
      // A restart ends any banner; the notifications not yet tapped stay in the list, as on iOS.
      model.notifications = model.notifications.map((n) => ({ ...n, banner: false }));
      // fallthrough: the phone starts on the home screen
    case "activity.home":
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
        const before = group[body.key];
        const writers = before?.writers ?? [];
        // The value, when the Studio read it from the store (live, while that version was current), and the last
        // version whose value was read, for the difference between them.
        const known = event.stored !== undefined;
        group[body.key] = { writer: body.writer, version: body.version, clock: event.clock,
          writers: writers.includes(body.writer) ? writers : [...writers, body.writer],
          known, value: event.stored, previous: before?.known ? { version: before.version, value: before.value } : before?.previous ?? null };
      }
      break;
    }
    case "state.call-failed":
      // What iOS would have let fail silently (a refused setter, an App Group that is not the plugin's).
      // The newest few are told; the count is all of them (a year's journal may hold many).
      (model.failedCalls[event.source] ||= []).push({ call: body.call, message: body.message });
      if (model.failedCalls[event.source].length > LISTED_FAILED_CALLS) model.failedCalls[event.source].shift();
      model.failedCounts[event.source] = (model.failedCounts[event.source] ?? 0) + 1;
      break;
    case "managedsettings.changed":
      model.stores[body.store] = { shield: body.shield || {}, writer: body.writer, clock: event.clock };
      break;
    case "managedsettings.read.reply":
      // A read (the Studio's own at connect, or a plugin's) tells every store as it is, whoever wrote it.
      for (const [name, shield] of Object.entries(body.ok ? body.value?.stores || {} : {})) {
        model.stores[name] = { shield, writer: model.stores[name]?.writer ?? "(before the Studio)", clock: model.stores[name]?.clock ?? event.clock };
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
      // Posted before the look: in the list, never a banner.
      model.notifications = (look.notifications || []).map((n) => ({ ...n, time: event.time, banner: false })).reverse().slice(0, LISTED_NOTIFICATIONS);
      break;
    }
    case "notification.posted":
      model.notifications = [{ ...body, time: event.time, banner: true }, ...model.notifications.filter((n) => n.id !== body.id)].slice(0, LISTED_NOTIFICATIONS);
      break;
    case "notification.tapped":
      model.notifications = model.notifications.filter((n) => n.id !== body.id);
      break;
    // A plugin waiting for its storage is started and exits again until it says hello: it stays shown waiting.
    case "plugin.started": plugin(model, body.name).restarts = body.restarts ?? 0; plugin(model, body.name).state = waitingOr(model, body.name, "starting"); break;
    case "plugin.up": plugin(model, body.name).waiting = false; plugin(model, body.name).state = "running"; break;
    case "plugin.down": plugin(model, body.name).state = waitingOr(model, body.name, "down"); break;
    case "plugin.exited":
      // A try that ended otherwise than for want of storage (status 75) ends the wait.
      if (!/status 75\b/.test(body.how || "")) plugin(model, body.name).waiting = false;
      plugin(model, body.name).state = waitingOr(model, body.name, "restarting");
      break;
    case "plugin.waiting-for-storage": plugin(model, body.name).waiting = true; plugin(model, body.name).state = "waiting-for-storage"; break;
    case "plugin.failed": plugin(model, body.name).waiting = false; plugin(model, body.name).state = "failed"; break;
  }
  if (event.schedules) model.schedules = event.schedules;
}

function waitingOr(model, name, state) {
  return plugin(model, name).waiting ? "waiting-for-storage" : state;
}

function plugin(model, name) {
  return (model.plugins[name] ||= { name, state: "?", restarts: 0 });
}

/// What changed from `before` to `after` (two stored values), in a few words: an object's members added, removed or
/// changed, an array's elements added or removed, or a scalar's old and new value.
/// `show(value, limit)` writes a value changed (by default its JSON, cut to `limit`).
function describeChange(before, after, show = shortJSON) {
  const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
  const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);
  if (same(before, after)) return "the same value";
  if (isObject(before) && isObject(after)) {
    const parts = [];
    for (const key of Object.keys(after)) {
      if (!(key in before)) parts.push(`+ ${key}: ${show(after[key], 24)}`);
      else if (!same(before[key], after[key])) parts.push(`${key}: ${show(before[key], 24)} → ${show(after[key], 24)}`);
    }
    for (const key of Object.keys(before)) if (!(key in after)) parts.push(`− ${key}`);
    return parts.join(", ");
  }
  if (Array.isArray(before) && Array.isArray(after)) {
    const [was, now] = [before.map((v) => JSON.stringify(v)), after.map((v) => JSON.stringify(v))];
    const added = after.filter((_, i) => !was.includes(now[i])), removed = before.filter((_, i) => !now.includes(was[i]));
    const parts = [...added.map((v) => `+ ${show(v, 24)}`), ...removed.map((v) => `− ${show(v, 24)}`)];
    return parts.length ? parts.join(", ") : "the same elements, reordered";
  }
  return `${show(before, 40)} → ${show(after, 40)}`;
}

function shortJSON(value, limit) {
  return shortText(JSON.stringify(value) ?? "undefined", limit);
}

function shortText(text, limit) {
  return text.length > limit ? text.slice(0, limit - 1) + "…" : text;
}
