#!/usr/bin/env python3
"""echo_plugin.py — a ShieldBus plugin in Python, written from docs/protocol.md (wire protocol v1).

It answers every `app.ping` event with an `app.pong` event whose body is
    {"echo": <the ping's body>, "answers": <the ping's seq>}
and acknowledges every event it receives. Along the way it does what the protocol asks of every plugin:
it finds the broker, says hello, heartbeats, checks its delivery numbers and reports gaps, says hello
again when the broker restarted or forgot it, and says bye on SIGTERM or SIGINT. Started by the broker
(supervised), it keeps a handled record (docs/protocol.md § 9.1): an event delivered again after a crash
is skipped and what handling it published is sent again, so each ping is answered exactly once; and it
dies with its broker, as the Swift SDK's plugins do.

Only dependency: pyzmq (`pip install pyzmq`, or `make deps` in the repository).

    python3 echo_plugin.py [--subscribe PREFIX ...] [--name NAME] [--endpoint ENDPOINT]

Exit status: 0 after SIGTERM/SIGINT, 1 when no broker answered in time, 2 when the broker refused the
hello (e.g. `--protocol-version 2`), 64 for bad arguments.
"""

import argparse
import ctypes
import json
import os
import signal
import sqlite3
import sys
import time

try:
    import zmq
except ImportError:  # pragma: no cover - depends on the machine
    sys.stderr.write("echo_plugin: the Python module 'zmq' is missing; install pyzmq "
                     "(`pip install pyzmq`, or `make deps` in the ShieldBus repository)\n")
    sys.exit(1)

PROTOCOL_VERSION = 1  # docs/protocol.md § 12.3


def log(message):
    sys.stderr.write(f"echo_plugin[{os.getpid()}]: {message}\n")
    sys.stderr.flush()


# ---------------------------------------------------------------------------------------------------
# Finding the broker (docs/protocol.md § 2)

def runtime_directory(explicit=None):
    """An explicit path, else $SHIELDBUS_RUNTIME_DIR, else $XDG_RUNTIME_DIR/shieldbus, else /tmp/shieldbus-<uid>."""
    environment = os.environ
    if explicit:
        path = explicit
    elif environment.get("SHIELDBUS_RUNTIME_DIR"):
        path = environment["SHIELDBUS_RUNTIME_DIR"]
    elif environment.get("XDG_RUNTIME_DIR"):
        path = environment["XDG_RUNTIME_DIR"] + "/shieldbus"
    else:
        path = f"/tmp/shieldbus-{os.getuid()}"
    return path[:-1] if len(path) > 1 and path.endswith("/") else path


def find_endpoint(explicit_endpoint=None, explicit_runtime_dir=None):
    """--endpoint, else $SHIELDBUS_ENDPOINT, else the runtime directory's `endpoint` file, else its bus.sock."""
    if explicit_endpoint:
        return explicit_endpoint
    if os.environ.get("SHIELDBUS_ENDPOINT") and not explicit_runtime_dir:
        return os.environ["SHIELDBUS_ENDPOINT"]
    directory = runtime_directory(explicit_runtime_dir)
    try:
        with open(directory + "/endpoint", encoding="utf-8") as file:
            written = file.read().strip()
    except OSError:
        written = ""
    return written or f"ipc://{directory}/bus.sock"


def curve_keys(endpoint, explicit_runtime_dir=None):
    """On tcp the broker requires CURVE (docs/protocol.md § 2): its public key from the runtime directory's
    broker.key; ours from $SHIELDBUS_CLIENT_KEY (a `shieldbus keys new` secret certificate on the allowlist),
    else the runtime directory's local.key_secret. None on ipc."""
    if not endpoint.startswith("tcp://"):
        return None
    import zmq.auth
    directory = runtime_directory(explicit_runtime_dir)
    server_public, _ = zmq.auth.load_certificate(directory + "/broker.key")
    public, secret = zmq.auth.load_certificate(os.environ.get("SHIELDBUS_CLIENT_KEY") or directory + "/local.key_secret")
    return server_public, public, secret


def find_credential(endpoint, explicit_runtime_dir=None):
    """What admits us (docs/protocol.md § 4.1): $SHIELDBUS_CREDENTIAL when the broker started us (our per-launch
    credential), else the cookie in the runtime directory — the ipc socket's folder, else the resolved one."""
    if os.environ.get("SHIELDBUS_CREDENTIAL"):
        return os.environ["SHIELDBUS_CREDENTIAL"]
    if endpoint.startswith("ipc://") and not endpoint.startswith("ipc://@") and not explicit_runtime_dir:
        directory = os.path.dirname(endpoint[len("ipc://"):])
    else:
        directory = runtime_directory(explicit_runtime_dir)
    try:
        with open(directory + "/cookie", encoding="utf-8") as file:
            return file.read().strip() or None
    except OSError:
        return None


def compact(value):
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


# ---------------------------------------------------------------------------------------------------
# The connection: handshake, heartbeats, delivery numbers, re-hello (docs/protocol.md §§ 4, 5, 8)

class Refused(Exception):
    """The broker refused our hello (an `error` before any welcome)."""

    def __init__(self, report):
        self.report = report
        supported = report.get("supported")
        extra = f" (supported versions: {', '.join(map(str, supported))})" if supported else ""
        super().__init__(f"{report.get('code')}: {report.get('message')}{extra}")


class BusConnection:
    def __init__(self, endpoint, name, role, subscriptions, version=PROTOCOL_VERSION, runtime_dir=None, curve=None):
        self.endpoint = endpoint
        self.runtime_dir = runtime_dir
        self.name = name
        self.role = role
        self.subscriptions = subscriptions
        self.version = version
        self.context = zmq.Context()
        self.socket = self.context.socket(zmq.DEALER)  # never REQ (§ 2); no routing id of our own
        self.socket.setsockopt(zmq.LINGER, 1000)       # lets the final bye leave (§ 5.3)
        if curve:                                      # tcp: CURVE keys, set before connecting (§ 2)
            self.socket.curve_serverkey, self.socket.curve_publickey, self.socket.curve_secretkey = curve
        self.socket.connect(endpoint)
        self.welcome = None          # the latest welcome
        self.in_session = False      # welcomed and not told bye since
        self.interval = 1.0          # heartbeat interval in seconds, from the welcome (§ 5.2)
        self.expected_delivery = 1   # the next delivery number we expect (§ 8)
        now = time.monotonic()
        self.last_sent = now
        self.last_heard = now
        self.last_hello = 0.0
        self.awaiting_welcome = False
        self.gaps = 0
        self.missed = 0

    # -- sending

    def send(self, kind, fields=None):
        message = {"v": self.version}
        message.update(fields or {})
        self.socket.send_multipart([kind.encode("ascii"), compact(message)])
        self.last_sent = time.monotonic()

    def hello(self, resume=False):
        # The pid is informational only; "batches": we read several events in one message (`events`, § 4.3).
        fields = {"name": self.name, "role": self.role, "subscribe": self.subscriptions,
                  "acks": self.role not in ("tap", "tool"), "pid": os.getpid(), "batches": True}
        if resume:
            fields["resume"] = True   # we kept our session's state: a broker that was only stalled goes on with it
        credential = find_credential(self.endpoint, self.runtime_dir)  # read afresh: a new broker may have a new cookie
        if credential:
            fields["credential"] = credential
        self.send("hello", fields)
        self.last_hello = time.monotonic()
        self.awaiting_welcome = True

    def publish(self, topic, body, corr=None, deadline=None):
        fields = {"topic": topic, "body": body}
        if corr is not None:
            fields["corr"] = corr
        if deadline is not None:
            fields["deadline"] = deadline
        self.send("publish", fields)

    def ack(self, seq):
        self.send("ack", {"seq": seq})

    def bye(self):
        """Says bye if we have a session; returns whether it did."""
        if not self.in_session:
            return False
        self.send("bye")
        self.in_session = False
        return True

    def close(self):
        self.socket.close()   # keeps up to LINGER for what is still queued (the bye)
        self.context.term()

    # -- liveness

    def maintain(self):
        """Heartbeat when due; say hello again when the broker has been silent for 3 intervals."""
        now = time.monotonic()
        if self.welcome is not None and now - self.last_sent >= self.interval:
            self.send("heartbeat")
        if self.welcome is not None and now - self.last_heard > 3 * self.interval and now - self.last_hello > self.interval:
            log(f"the broker has been silent for {now - self.last_heard:.1f} s; saying hello again")
            self.hello(resume=self.in_session)

    def next_due(self):
        """Seconds until maintain() has something to do."""
        now = time.monotonic()
        heartbeat = self.last_sent + self.interval - now
        silence = max(self.last_heard + 3 * self.interval, self.last_hello + self.interval) - now
        return max(0.0, min(heartbeat, silence + 0.001, self.interval))

    # -- receiving

    def handle(self, frames):
        """Reads one broker message; returns the (kind, fields, delivery) for the caller — several for a batch of
        events, none when it was handled here."""
        self.last_heard = time.monotonic()
        # Frame 1 is the kind; an event's also carries our delivery number after a space: "event 17", and a
        # batch's the first of its delivery numbers: "events 17" (§ 3).
        kind, _, delivery_text = frames[0].decode("ascii", "replace").partition(" ")
        if len(frames) != 2:
            log(f"ignoring a '{kind}' message with {len(frames)} frames (expected 2)")
            return []
        if kind in ("event", "events") and not delivery_text.isdigit():
            log(f"ignoring an event whose first frame has no delivery number: {frames[0]!r}")
            return []
        try:
            # A batch holds one envelope per line, delivered with the numbers that follow the first.
            parts = [json.loads(line) for line in frames[1].split(b"\n")] if kind == "events" else [json.loads(frames[1])]
        except ValueError as error:
            log(f"ignoring a '{kind}' message whose JSON frame is not JSON: {error}")
            return []
        if kind in ("event", "events"):
            return [("event", fields, self.delivered(int(delivery_text) + offset)) for offset, fields in enumerate(parts)]
        fields = parts[0]
        if kind == "welcome" and fields.get("resumed") is True and self.in_session:
            # The broker was only stalled: the session goes on, deliveries counted where they were (§ 5.2).
            self.awaiting_welcome = False
            self.interval = max(0.05, fields["heartbeat"] / 1000.0)
            log(f"the session goes on (resumed, last seq {fields['seq']})")
            return []
        if kind == "welcome":
            self.welcome = fields
            self.in_session = True
            self.awaiting_welcome = False
            self.interval = max(0.05, fields["heartbeat"] / 1000.0)
            self.expected_delivery = 1   # a new session counts deliveries from 1
            log(f"welcomed as '{fields['name']}' (clock {fields['clock']}, last seq {fields['seq']}, "
                f"heartbeat {fields['heartbeat']} ms) at {self.endpoint}")
            return []
        if kind == "heartbeat":
            return []
        if kind == "error":
            if fields.get("code") == "hello-required":
                # The broker restarted, or removed us after a timeout: say hello again (once per interval).
                if not self.awaiting_welcome or time.monotonic() - self.last_hello > self.interval:
                    log("the broker does not know us (hello-required); saying hello again")
                    self.hello()
                return []
            if self.welcome is None or fields.get("code") in ("unsupported-version", "bad-hello", "bad-name", "not-admitted", "role-not-allowed"):
                raise Refused(fields)
            return [(kind, fields, None)]
        if kind == "bye":
            log(f"the broker said bye ({fields.get('reason', '')}); waiting for it to come back")
            self.in_session = False
            return []
        return [(kind, fields, None)]

    def delivered(self, delivery):
        """Checks an event's delivery number against the one expected (§ 8); reports a gap. Returns it."""
        if delivery > self.expected_delivery:
            first, last = self.expected_delivery, delivery - 1
            self.gaps += 1
            self.missed += last - first + 1
            log(f"deliveries {first}..{last} never arrived; reporting the gap")
            self.send("gap", {"from": first, "to": last})
        self.expected_delivery = max(self.expected_delivery, delivery + 1)
        return delivery


# ---------------------------------------------------------------------------------------------------
# At least once (docs/protocol.md § 9.1)

class HandledRecord:
    """The events this plugin has handled and what handling each published, in
    <state dir>/cursors/<name>/handled.sqlite (a folder the sandbox shows this plugin alone): it survives the process, so the next one skips a redelivered event
    and sends its publications again (each with the same cause and index, so the broker keeps one copy)."""

    def __init__(self, path):
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        self.db = sqlite3.connect(path, isolation_level=None)  # transactions are explicit below
        self.db.execute("PRAGMA journal_mode=WAL")             # a commit survives a SIGKILL of this process
        # NORMAL, as the Swift SDK: a commit is in the WAL when it returns (safe from a crash of this process or
        # its broker) without an fsync per event, which a slow disk would make every ping wait for.
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.execute("CREATE TABLE IF NOT EXISTS handled (seq INTEGER PRIMARY KEY)")
        self.db.execute("CREATE TABLE IF NOT EXISTS published (seq INTEGER, idx INTEGER, message TEXT, PRIMARY KEY (seq, idx))")

    @staticmethod
    def for_supervised_plugin(name):
        """The record of a plugin the broker started, or None when run by hand (nothing redelivers to it)."""
        state = os.environ.get("SHIELDBUS_STATE_DIR")
        if os.environ.get("SHIELDBUS_SUPERVISED") != "1" or not state:
            return None
        return HandledRecord(f"{state}/cursors/{name}/handled.sqlite")

    def publications(self, seq):
        """What handling `seq` published, in order; None if it was never handled."""
        if self.db.execute("SELECT 1 FROM handled WHERE seq = ?", (seq,)).fetchone() is None:
            return None
        return [json.loads(message) for (message,) in
                self.db.execute("SELECT message FROM published WHERE seq = ? ORDER BY idx", (seq,))]

    def record(self, seq, messages):
        """`seq` is handled and published `messages`: one transaction, before they are sent — so a process
        killed after it has only to send them again."""
        self.db.execute("BEGIN IMMEDIATE")
        self.db.execute("INSERT INTO handled (seq) VALUES (?)", (seq,))
        self.db.executemany("INSERT INTO published VALUES (?, ?, ?)",
                            [(seq, index, json.dumps(message)) for index, message in enumerate(messages)])
        self.db.execute("COMMIT")


def die_with_parent():
    """A supervised plugin ends with the broker that started it (Linux: PR_SET_PDEATHSIG), so a killed broker
    leaves no plugin behind to confuse its successor; elsewhere the broker's SIGTERM does it."""
    if os.environ.get("SHIELDBUS_SANDBOX"):
        return  # sandboxed: the first process of a pid namespace that dies with the broker (getppid() is 0 there)
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # 1 = PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    # The broker died before we asked: the parent is already another process (init, or a subreaper).
    broker = os.environ.get("SHIELDBUS_BROKER_PID")
    if os.getppid() == 1 or (broker and broker.isdigit() and os.getppid() != int(broker)):
        os.kill(os.getpid(), signal.SIGKILL)


def answer(fields):
    """What an event makes this plugin publish, as (topic, body) pairs: a pong for a ping, nothing else."""
    if fields["topic"] == "app.ping":
        return [("app.pong", {"echo": fields["body"], "answers": fields["seq"]})]
    return []


# ---------------------------------------------------------------------------------------------------
# The plugin

def parse_arguments(argv):
    environment = os.environ
    parser = argparse.ArgumentParser(description="A ShieldBus plugin in Python: answers app.ping with app.pong.")
    parser.add_argument("--endpoint", help="the broker's endpoint (default: $SHIELDBUS_ENDPOINT, else the runtime directory's endpoint file)")
    parser.add_argument("--runtime-dir", help="the broker's runtime directory (default: $SHIELDBUS_RUNTIME_DIR, $XDG_RUNTIME_DIR/shieldbus, /tmp/shieldbus-<uid>)")
    parser.add_argument("--name", default=environment.get("SHIELDBUS_PLUGIN_NAME") or "python-example",
                        help="the name on the bus (default: $SHIELDBUS_PLUGIN_NAME, else python-example)")
    parser.add_argument("--role", default=environment.get("SHIELDBUS_PLUGIN_ROLE") or "generic",
                        help="the role (default: $SHIELDBUS_PLUGIN_ROLE, else generic)")
    parser.add_argument("--subscribe", action="append", metavar="PREFIX",
                        help="a topic prefix to receive; repeatable (default: app.)")
    parser.add_argument("--connect-timeout", type=float, default=10.0, metavar="SECONDS",
                        help="how long to wait for the first welcome (default: 10)")
    parser.add_argument("--protocol-version", type=int, default=PROTOCOL_VERSION, metavar="N",
                        help="the protocol version to announce (to see a refusal, try 2)")
    arguments = parser.parse_args(argv)
    if arguments.subscribe is None:
        arguments.subscribe = ["app."]
    return arguments


def main(argv=None):
    try:
        arguments = parse_arguments(argv)
    except SystemExit as exit:
        return 64 if exit.code else 0

    # Signals: the handler only sets a flag; the wake-up pipe makes the poll return at once.
    stopping = []
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_read, False)
    os.set_blocking(wake_write, False)
    signal.set_wakeup_fd(wake_write, warn_on_full_buffer=False)

    def stop(signum, _frame):
        stopping.append(signal.Signals(signum).name)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)

    endpoint = find_endpoint(arguments.endpoint, arguments.runtime_dir)
    try:
        curve = curve_keys(endpoint, arguments.runtime_dir)
    except OSError as error:
        log(f"cannot read the CURVE keys for {endpoint}: {error}")
        return 1
    if os.environ.get("SHIELDBUS_SUPERVISED") == "1":
        die_with_parent()
    try:
        record = HandledRecord.for_supervised_plugin(arguments.name)
    except (sqlite3.Error, OSError) as error:  # OSError: its folder cannot be made (a sandbox shows only this plugin's)
        log(f"cannot open the handled record in {os.environ.get('SHIELDBUS_STATE_DIR')}/cursors: {error}")
        return 78  # EX_CONFIG: the broker marks the plugin failed with this line instead of restarting it
    bus = BusConnection(endpoint, arguments.name, arguments.role, arguments.subscribe, arguments.protocol_version, arguments.runtime_dir, curve)
    poller = zmq.Poller()
    poller.register(bus.socket, zmq.POLLIN)
    poller.register(wake_read, zmq.POLLIN)

    bus.hello()
    started = time.monotonic()
    pings = 0
    skipped = 0
    status = 0
    try:
        while not stopping:
            if bus.welcome is None and time.monotonic() - started > arguments.connect_timeout:
                log(f"no broker answered at {endpoint} within {arguments.connect_timeout:g} s — is `shieldbus run` "
                    f"running? (SHIELDBUS_ENDPOINT, --endpoint, or SHIELDBUS_RUNTIME_DIR/--runtime-dir)")
                status = 1
                break
            bus.maintain()
            ready = dict(poller.poll(int(bus.next_due() * 1000) + 1))
            if wake_read in ready:
                try:
                    os.read(wake_read, 512)
                except BlockingIOError:
                    pass
            if bus.socket not in ready:
                continue
            # Drain what is there (bounded, so heartbeats are never starved).
            for _ in range(1000):
                try:
                    frames = bus.socket.recv_multipart(zmq.NOBLOCK)
                except zmq.Again:
                    break
                for kind, fields, _delivery in bus.handle(frames):
                    if kind == "error":
                        log(f"the broker refused a message: {fields.get('code')}: {fields.get('message')}")
                    elif kind == "event":
                        seq = fields["seq"]
                        messages = record.publications(seq) if record else None
                        if messages is not None:
                            # Handled by an earlier process that died before its ack arrived: skip it, but send
                            # again what it published (the broker may never have read it; a copy is dropped).
                            skipped += 1
                            log(f"seq {seq} ({fields['topic']}) was handled already; sending its {len(messages)} publication(s) again")
                        else:
                            messages = [{"topic": topic, "body": body} for topic, body in answer(fields)]
                            if record:
                                # Cause and index let the broker recognise the copy a later process sends again.
                                for index, message in enumerate(messages):
                                    message.update(cause=seq, index=index)
                                record.record(seq, messages)
                            pings += 1 if messages else 0
                        # Publish the consequences first, then acknowledge (docs/protocol.md § 9).
                        for message in messages:
                            bus.send("publish", message)
                        bus.ack(seq)
    except Refused as refusal:
        log(f"the broker refused our hello: {refusal}")
        status = 2
    finally:
        if stopping:
            farewell = "said bye" if bus.bye() else "no session to say bye to"
            log(f"stopping on {stopping[0]}: {farewell}; answered {pings} ping(s), skipped {skipped} handled before; "
                f"{bus.gaps} gap(s), {bus.missed} missed deliveries")
        bus.close()
        signal.set_wakeup_fd(-1)
        os.close(wake_read)
        os.close(wake_write)
    return status


if __name__ == "__main__":
    sys.exit(main())
