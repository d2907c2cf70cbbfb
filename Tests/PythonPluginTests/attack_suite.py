#!/usr/bin/env python3
"""attack_suite.py — outside clients attacking a running ShieldBus broker, written from docs/protocol.md.

Runs against a broker playing the habit lock (Config/habit-lock.yml: plugins monitor, shield, action, app,
reports, notifier) whose configuration grants outside clients `clients: [{roles: [tap, generic]},
{name: person, roles: [tool]}]`; the person's own tool presents the tool credential, as `shieldbus do` does. Each attack of issue #10 is tried; every check prints one JSON line
    {"check": "...", "ok": true|false, "detail": "..."}
and the Swift test (TrustAttackTests) asserts each. Between attacks a bystander client checks that the broker
still serves others, and the lock store is compared with its state before the attacks.

    python3 attack_suite.py --runtime-dir DIR
"""

import argparse
import json
import os
import sys
import time

import zmq

RESULTS = []


def report(check, ok, detail=""):
    line = {"check": check, "ok": bool(ok), "detail": detail}
    RESULTS.append(line)
    print(json.dumps(line), flush=True)


def compact(value):
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


class Client:
    """One DEALER connection (docs/protocol.md §§ 2–5)."""

    def __init__(self, endpoint, curve=None):
        """`curve`: (broker's public key, client's public key, client's secret key), for a tcp endpoint (§ 2)."""
        self.socket = CONTEXT.socket(zmq.DEALER)
        self.socket.setsockopt(zmq.LINGER, 0)
        if curve:
            self.socket.curve_serverkey, self.socket.curve_publickey, self.socket.curve_secretkey = curve
        self.socket.connect(endpoint)
        self.last_sent = time.monotonic()
        self.events = []

    def send(self, kind, fields):
        message = {"v": 1}
        message.update(fields)
        self.socket.send_multipart([kind.encode("ascii"), compact(message)])
        self.last_sent = time.monotonic()

    def receive(self, timeout):
        """The next message other than a heartbeat, as (kind, fields), or None at the deadline."""
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            if time.monotonic() - self.last_sent > 0.5:
                self.send("heartbeat", {})
            if not self.socket.poll(int(min(remaining, 0.25) * 1000) + 1):
                continue
            frames = self.socket.recv_multipart()
            kind = frames[0].decode("ascii").partition(" ")[0]   # an event's frame 1 is "event <delivery>"
            if kind == "heartbeat":
                continue
            fields = json.loads(frames[1])
            if kind == "event":
                self.send("ack", {"seq": fields["seq"]})
            return kind, fields

    def hello(self, name, role, subscribe=(), credential=None, pid=None, timeout=5, acks=False):
        """Says hello; returns ("welcome", fields) or ("error", fields)."""
        fields = {"name": name, "role": role, "subscribe": list(subscribe), "acks": acks}
        if credential is not None:
            fields["credential"] = credential
        if pid is not None:
            fields["pid"] = pid
        self.send("hello", fields)
        while True:
            message = self.receive(timeout)
            if message is None or message[0] in ("welcome", "error"):
                return message

    def publish(self, topic, body, corr=None):
        fields = {"topic": topic, "body": body}
        if corr is not None:
            fields["corr"] = corr
        self.send("publish", fields)

    def wait_for(self, predicate, timeout=10):
        """The first event or error matching `predicate`, keeping every event seen in self.events."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            message = self.receive(deadline - time.monotonic())
            if message is None:
                return None
            if message[0] == "event":
                self.events.append(message[1])
            if predicate(*message):
                return message
        return None

    def error_after(self, action, timeout=5):
        """Does `action`, then returns the code of the error that answers it (None if none came in time)."""
        action()
        message = self.wait_for(lambda kind, fields: kind == "error", timeout)
        return message[1]["code"] if message else None

    def close(self):
        self.socket.close(0)


def status(credential=None):
    client = Client(ENDPOINT)
    client.send("status", {"credential": credential} if credential else {})
    message = client.wait_for(lambda kind, fields: kind == "status", 5)
    client.close()
    return message[1]["report"] if message else None


def plugin(report_, name):
    return next((entry for entry in report_["plugins"] if entry["name"] == name), None)


def has_key(value, key):
    if isinstance(value, dict):
        return key in value or any(has_key(item, key) for item in value.values())
    if isinstance(value, list):
        return any(has_key(item, key) for item in value)
    return False


CALLS = [0]
COOKIE = [None]  # the outside clients' cookie, read in main()


def call(client, topic, body, timeout=5):
    """A request and its reply (docs/protocol.md § 7)."""
    CALLS[0] += 1
    corr = f"attack-{os.getpid()}-{CALLS[0]}"
    client.publish(topic, body, corr=corr)
    message = client.wait_for(lambda kind, fields: kind == "event" and fields.get("corr") == corr
                              and fields["topic"].endswith(".reply") or kind == "error", timeout)
    return message


def lock_store(client):
    message = call(client, "managedsettings.read.request", {})
    if not message or message[0] != "event" or not message[1]["body"].get("ok"):
        return None
    return message[1]["body"]["value"]["stores"].get("lock")


def bystander_served(after):
    """A well-behaved client still gets its own event back through the broker."""
    BYSTANDER.publish("x.bystander.ping", {"after": after})
    message = BYSTANDER.wait_for(lambda kind, fields: kind == "event" and fields["topic"] == "x.bystander.ping"
                                 and fields["body"].get("after") == after, 5)
    report(f"broker serves others after: {after}", message is not None)


def hellos_as_monitor_until_it_is_back(credential, old_pid, seconds, at_least):
    """Impostor hellos as the monitor, one after another, until its new process holds its session (and at least
    `at_least` were tried) or `seconds` pass; their answers."""
    answers = []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        impostor = Client(ENDPOINT)
        answers.append(impostor.hello("monitor", "monitor", ["deviceactivity."], credential=credential, timeout=2))
        impostor.close()
        current = plugin(status(COOKIE[0]), "monitor")
        if current["connected"] and current.get("pid") not in (None, old_pid) and len(answers) >= at_least:
            break
    return answers


def main():
    global CONTEXT, ENDPOINT, BYSTANDER
    parser = argparse.ArgumentParser()
    parser.add_argument("--runtime-dir", required=True)
    arguments = parser.parse_args()
    runtime = arguments.runtime_dir
    with open(runtime + "/endpoint", encoding="utf-8") as file:
        ENDPOINT = file.read().strip()
    with open(runtime + "/cookie", encoding="utf-8") as file:
        cookie = file.read().strip()
    COOKIE[0] = cookie
    with open(runtime + "/tool-credential", encoding="utf-8") as file:
        tool_credential = file.read()
    CONTEXT = zmq.Context()

    BYSTANDER = Client(ENDPOINT)
    welcomed = BYSTANDER.hello("bystander", "generic", ["x.bystander."], credential=cookie)
    report("a well-behaved outside client with the cookie is welcomed", welcomed and welcomed[0] == "welcome", str(welcomed))
    settings = welcomed[1].get("settings", {}) if welcomed else {}
    missing = [key for key in ("clockOffsetMs", "configuration", "profile", "quirks", "ready", "timeZone") if key not in settings]
    report("the welcome carries every documented setting (clockOffsetMs among them)", not missing, f"missing {missing} in {settings}")
    watcher = Client(ENDPOINT)  # a tap: it reads everything, and may not publish
    watcher.hello("watcher", "tap", [""], credential=cookie)
    person = Client(ENDPOINT)   # the person's tool: the tool credential lets it act as the person
    answer = person.hello("shieldbus-do", "tool", [], credential=tool_credential)
    report("the person's tool with the tool credential is welcomed under any name", answer and answer[0] == "welcome", str(answer))
    lock_before, deadline = None, time.monotonic() + 20
    while time.monotonic() < deadline and not (lock_before and lock_before.get("applications")):
        lock_before = lock_store(BYSTANDER)  # the monitor locks once the app has authorization and the selection
    report("the lock store shields the selection before the attacks", bool(lock_before and lock_before.get("applications")), str(lock_before))

    # 1. Session takeover: status without credential shows no pids; a hello with the monitor's name and pid fails.
    anonymous = status()
    report("status without a credential shows no pids, paths or errors",
           anonymous is not None and not any(has_key(anonymous, key) for key in ("pid", "log", "lastError", "runtimeDir")),
           json.dumps(anonymous)[:300])
    full = status(cookie)
    monitor_before = plugin(full, "monitor")
    for credential, label in ((None, "no credential"), (cookie, "the outside clients' cookie"), ("0" * 64, "a guessed credential")):
        impostor = Client(ENDPOINT)
        answer = impostor.hello("monitor", "monitor", ["deviceactivity."], credential=credential, pid=monitor_before["pid"])
        report(f"takeover: hello as monitor with its pid and {label} is refused not-admitted",
               answer and answer[0] == "error" and answer[1]["code"] == "not-admitted", str(answer))
        impostor.close()
    impostor = Client(ENDPOINT)
    answer = impostor.hello("evil-monitor", "monitor", ["deviceactivity."], credential=cookie)
    report("takeover: another name claiming the monitor's role is refused role-not-allowed",
           answer and answer[0] == "error" and answer[1]["code"] == "role-not-allowed", str(answer))
    impostor.close()
    monitor_after = plugin(status(cookie), "monitor")
    report("takeover: the real monitor keeps its session, pid and restarts",
           monitor_after["connected"] and monitor_after["pid"] == monitor_before["pid"]
           and monitor_after["restarts"] == monitor_before["restarts"] and monitor_after.get("state") == "running",
           f"before {monitor_before} after {monitor_after}")
    bystander_served("takeover")

    # 2. Self-declared roles: tool without the cookie, and a tool the configuration does not grant.
    for name, credential, code in (("sneaky", None, "not-admitted"), ("sneaky", cookie, "role-not-allowed")):
        client = Client(ENDPOINT)
        answer = client.hello(name, "tool", [], credential=credential)
        report(f"self-declared tool ({'with' if credential else 'without'} the cookie) is refused {code}",
               answer and answer[0] == "error" and answer[1]["code"] == code, str(answer))
        client.close()
    # A tool the configuration names is admitted by the cookie, but only the tool credential acts as the person.
    named = Client(ENDPOINT)
    answer = named.hello("person", "tool", [], credential=cookie)
    report("a tool the configuration names is admitted with the cookie", answer and answer[0] == "welcome", str(answer))
    code = named.error_after(lambda: named.publish("input.habit.complete.request", {"habit": "run"}, corr="named-1"))
    report("a tool admitted by the cookie cannot act as the person (input.* refused reserved-topic)", code == "reserved-topic", str(code))
    named.close()
    for name, role in (("helper", "generic"), ("forger-tool", "generic")):
        client = Client(ENDPOINT)
        client.hello(name, role, ["x." + name + "."], credential=cookie)
        code = client.error_after(lambda: client.publish("input.open.request", {"app": "Instagram"}, corr=f"{name}-input"))
        report(f"a {role} client named {name} cannot publish the person's input (reserved-topic)", code == "reserved-topic", str(code))
        client.close()

    # 3. Forged system events, from a generic client with the cookie.
    forger = Client(ENDPOINT)
    forger.hello("forger", "generic", ["x.forger."], credential=cookie)
    errors_before = status(cookie)["counters"]["errorsByCode"].get("reserved-topic", 0)
    forged = [("activity.habit.completed", {"habit": "run"})] * 3 + [
        ("deviceactivity.interval-did-end", {"activity": "habit-lock.daily"}),
        ("shield.action.request", {"action": "primaryButtonPressed"}),
        ("clock.tick", {}), ("device.restarted", {}), ("plugin.down", {"name": "monitor"}),
    ]
    for topic, body in forged:
        code = forger.error_after(lambda: forger.publish(topic, body))
        report(f"forged {topic} is refused reserved-topic", code == "reserved-topic", str(code))
    errors_after = status(cookie)["counters"]["errorsByCode"].get("reserved-topic", 0)
    report("every forged event is counted", errors_after - errors_before == len(forged), f"{errors_before} → {errors_after}")
    code = forger.error_after(lambda: forger.publish("x.monitor.state", {"locked": False}))
    report("publishing in another plugin's namespace x.monitor. is refused foreign-namespace", code == "foreign-namespace", str(code))
    forger.publish("x.forger.note", {"mine": True})
    own = forger.wait_for(lambda kind, fields: kind == "event" and fields["topic"] == "x.forger.note" or kind == "error", 5)
    report("publishing in one's own namespace x.forger. is accepted and stamped with the sender",
           own and own[0] == "event" and own[1]["source"] == "forger", str(own))
    code = watcher.error_after(lambda: watcher.publish("app.note", {}))
    report("a tap cannot publish (read-only)", code == "read-only", str(code))
    report("no unlock started after the forgeries", not any(event["topic"] == "app.unlock.started" for event in watcher.events))
    bystander_served("forged events")

    # 4. Reply hijacking: the shield configuration, the shield action, a report request.
    hijacker = Client(ENDPOINT)
    hijacker.hello("hijacker", "generic", ["shield.", "report."], credential=cookie)
    code = hijacker.error_after(lambda: hijacker.publish("shield.configuration.reply", {"configuration": {"title": "Free!"}}, corr="os-shield-1"))
    report("a guessed shield.configuration.reply is refused reply-refused", code == "reply-refused", str(code))

    def hijack_os_request(what, input_topic, input_body, role, reply_body, outcome_topic, field, holder):
        """The person acts; the OS asks the holder of `role`; the hijacker answers with the request's corr."""
        watcher.events.clear()
        person.publish(input_topic, input_body, corr=f"person-{role}")
        request_topic = f"shield.{what}.request"
        request = watcher.wait_for(lambda kind, fields: kind == "event" and fields["topic"] == request_topic, 10)
        report(f"the OS asks the {role} role: {request_topic}", request is not None)
        if request:
            reply_topic, corr = f"shield.{what}.reply", request[1]["corr"]
            code = hijacker.error_after(lambda: hijacker.publish(reply_topic, reply_body, corr=corr))
            report(f"hijacking {reply_topic} is refused reply-refused", code == "reply-refused", str(code))
        outcome = watcher.wait_for(lambda kind, fields: kind == "event" and fields["topic"] == outcome_topic, 10)
        report(f"{outcome_topic} names the configured {role} plugin as {field}",
               outcome and outcome[1]["body"].get(field) == holder, str(outcome and outcome[1]["body"]))
        report(f"the hijacker never received {request_topic}", not any(event["topic"] == request_topic for event in hijacker.events))

    hijack_os_request("configuration", "input.open.request", {"app": "Instagram"}, "shield",
                      {"configuration": {"title": "Free!"}}, "shield.shown", "renderedBy", "shield")
    hijack_os_request("action", "input.press.request", {"button": "primary"}, "action",
                      {"response": "none"}, "shield.action.handled", "decidedBy", "action")

    watcher.events.clear()
    person.publish("report.daily.request", {}, corr="person-report-1")
    request = watcher.wait_for(lambda kind, fields: kind == "event" and fields["topic"] == "report.daily.request", 10)
    code = hijacker.error_after(lambda: hijacker.publish("report.daily.reply", {"ok": True, "value": {}}, corr="person-report-1"))
    report("hijacking the report reply is refused reply-refused", code == "reply-refused", str(code))
    answer = person.wait_for(lambda kind, fields: kind == "event" and fields.get("corr") == "person-report-1", 10)
    report("the report request is answered by the report builder",
           answer and answer[1]["source"] == "reports" and answer[1]["body"].get("ok") is True, str(answer and answer[1]["source"]))
    report("the hijacker never received the report request",
           not any(event["topic"] == "report.daily.request" for event in hijacker.events))
    hijack_errors = status(cookie)["counters"]["errorsByCode"].get("reply-refused", 0)
    report("refused replies are counted", hijack_errors >= 4, str(hijack_errors))
    bystander_served("reply hijacking")

    # 5a. A tap that asks to acknowledge (it would hold up virtual time while it reads), and topics in the plugins'
    # namespace that name nobody's topic.
    greedy = Client(ENDPOINT)
    greedy.hello("greedy-tap", "tap", ["x.bystander."], credential=cookie, acks=True)
    greedy_entry = plugin(status(cookie), "greedy-tap")
    report("a tap asking for acks: true does not acknowledge", greedy_entry and greedy_entry.get("acknowledges") is False, str(greedy_entry))
    greedy.close()
    for topic in ("x", "x.bystander"):
        code = BYSTANDER.error_after(lambda: BYSTANDER.publish(topic, {}))
        report(f"the bare topic {topic!r} is refused bad-topic", code == "bad-topic", str(code))

    # 5. Bad names.
    for name in ("Broker", "br\u043eker", "mon\u001bitor", "nul\u0000", "bell\u0007", "zero\u200bwidth", "x" * 65, "broker", ""):
        client = Client(ENDPOINT)
        answer = client.hello(name, "generic", [], credential=cookie)
        report(f"the name {name.encode('unicode_escape').decode()!r} is refused bad-name",
               answer and answer[0] == "error" and answer[1]["code"] == "bad-name", str(answer))
        client.close()
    bystander_served("bad names")

    # 6a. Bounds and ids: subscriptions and waiting requests per session are limited; correlation ids are each
    # requester's own, so one claiming the monitor's makes none of its calls fail; two outside clients do request
    # and reply in the answerer's namespace.
    greedy = Client(ENDPOINT)
    answer = greedy.hello("greedy", "generic", [f"x.greedy.{n}." for n in range(1001)], credential=cookie)
    report("a hello with 1,001 subscriptions is refused too-many-subscriptions",
           answer and answer[0] == "error" and answer[1]["code"] == "too-many-subscriptions", str(answer)[:200])
    greedy.close()
    hoarder = Client(ENDPOINT)
    hoarder.hello("hoarder", "generic", [], credential=cookie)
    for n in range(1024):
        hoarder.publish("x.hoarder.q.request", {}, corr=f"h-{n}")
    code = hoarder.error_after(lambda: hoarder.publish("x.hoarder.q.request", {}, corr="h-over"))
    report("the 1,025th request waiting in one session is refused too-many-requests", code == "too-many-requests", str(code))
    hoarder.close()
    squatter = Client(ENDPOINT)
    squatter.hello("squatter", "generic", [], credential=cookie)
    for n in range(1, 1001):
        squatter.publish("x.squatter.q.request", {}, corr=f"monitor-{n}")
    duplicates_before = status(cookie)["counters"]["errorsByCode"].get("duplicate-corr", 0)
    answerer = Client(ENDPOINT)
    answerer.hello("answerer", "generic", ["x.answerer."], credential=cookie)
    asker = Client(ENDPOINT)
    asker.hello("asker", "generic", [], credential=cookie)
    asker.publish("x.answerer.q.request", {"n": 1}, corr="ask-1")
    request = answerer.wait_for(lambda kind, fields: kind == "event" and fields["topic"] == "x.answerer.q.request", 5)
    if request:
        answerer.publish("x.answerer.q.reply", {"answer": 42}, corr=request[1]["corr"])
    reply = asker.wait_for(lambda kind, fields: kind == "event" and fields["topic"] == "x.answerer.q.reply" or kind == "error", 5)
    report("two outside clients do request and reply in the answerer's namespace",
           reply is not None and reply[0] == "event" and reply[1]["body"].get("answer") == 42 and reply[1].get("corr") == "ask-1", str(reply))
    answerer.close()
    asker.close()

    # 6. An impostor racing the monitor's new process after a device restart.
    monitor_before = plugin(status(cookie), "monitor")
    person.publish("input.restart.request", {}, corr="person-restart-1")
    answers = hellos_as_monitor_until_it_is_back(credential=cookie, old_pid=monitor_before["pid"], seconds=3, at_least=5)
    report(f"after a device restart, all {len(answers)} impostor hellos as monitor are refused not-admitted",
           all(answer and answer[0] == "error" and answer[1]["code"] == "not-admitted" for answer in answers), str(answers[:2]))
    restarted = None
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        restarted = plugin(status(cookie), "monitor")
        if restarted["connected"] and restarted.get("pid") != monitor_before["pid"]:
            break
    report("after the restart the monitor's new process holds its session",
           restarted and restarted["connected"] and restarted.get("pid") != monitor_before["pid"] and restarted.get("state") == "running",
           str(restarted))
    bystander_served("device restart")
    duplicates_after = status(cookie)["counters"]["errorsByCode"].get("duplicate-corr", 0)
    report("1,000 correlation ids claimed as the monitor's make none of its calls fail after the restart (no duplicate-corr)",
           duplicates_after == duplicates_before, f"{duplicates_before} → {duplicates_after}")
    squatter.close()

    # 7. A copy of the monitor's own credential (read from /proc, as any process of the same user can), presented
    # while the monitor lives and at every moment around its death: it admits nobody but the monitor's process.
    for round_ in range(2):
        alive = plugin(status(cookie), "monitor")
        with open(f"/proc/{alive['pid']}/environ", "rb") as file:
            environment = dict(item.split(b"=", 1) for item in file.read().split(b"\0") if b"=" in item)
        stolen = environment[b"SHIELDBUS_CREDENTIAL"].decode()
        impostor = Client(ENDPOINT)
        answer = impostor.hello("monitor", "monitor", ["deviceactivity."], credential=stolen)
        impostor.close()
        report(f"round {round_ + 1}: the live monitor's copied credential on another connection is refused name-taken",
               answer and answer[0] == "error" and answer[1]["code"] == "name-taken", str(answer))
        os.kill(alive["pid"], 9)
        answers = hellos_as_monitor_until_it_is_back(credential=stolen, old_pid=alive["pid"], seconds=10, at_least=20)
        current = plugin(status(cookie), "monitor")
        welcomed = [answer for answer in answers if not answer or answer[0] != "error"]
        report(f"round {round_ + 1}: all {len(answers)} hellos with the killed monitor's credential are refused",
               len(answers) >= 20 and not welcomed, str(welcomed[:2] or answers[:2]))
        report(f"round {round_ + 1}: the monitor's new process holds its session",
               current["connected"] and current.get("pid") != alive["pid"], str(current))
    bystander_served("a dead plugin's credential")

    lock_after = lock_store(BYSTANDER)
    report("the lock store is untouched by every attack", lock_after == lock_before, f"before {lock_before} after {lock_after}")
    names = ("monitor", "shield", "action", "app", "reports", "notifier")
    final, deadline = None, time.monotonic() + 20
    while time.monotonic() < deadline:  # the device restart restarted every plugin: they come back one by one
        final = status(cookie)
        if all(plugin(final, name) and plugin(final, name)["connected"] for name in names):
            break
    report("every configured plugin is connected again at the end",
           all(plugin(final, name) and plugin(final, name)["connected"] for name in names),
           str([(entry["name"], entry["connected"]) for entry in final["plugins"]]))

    for client in (BYSTANDER, watcher, person, forger, hijacker):
        client.send("bye", {})
        client.close()
    CONTEXT.term()
    return 0


if __name__ == "__main__":
    sys.exit(main())
