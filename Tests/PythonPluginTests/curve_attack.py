#!/usr/bin/env python3
"""curve_attack.py — outside clients on a ShieldBus broker's tcp endpoint, written from docs/protocol.md § 2 and
docs/security.md § 2 alone.

Reuses attack_suite.py's client (§§ 3–5). Runs against a broker listening on tcp (CURVE) whose configuration allows the key in KEY_SECRET (made with
`shieldbus keys new`) and grants outside clients `clients: [{roles: [tap, generic]}]`. Tried:

- an allowlisted key presenting no credential, the cookie, and a wrong credential (refused `not-admitted`);
- FLOOD clients each with a fresh random CURVE key, all within about a second: none receives anything, and an
  allowlisted client is served throughout.

Every check prints one JSON line {"check": "...", "ok": true|false, "detail": "..."}; the last line is
{"flood": {"keys": N, "seconds": S}}, S being the wall time from the first refused client's connect to the last's.
The Swift test (TrustAttackTests) asserts each check, and the broker's log and counters against the flood.

    python3 curve_attack.py --runtime-dir DIR --key DIR/dev.key_secret [--flood 300]
"""

import argparse
import json
import sys
import time

import zmq
import zmq.auth

import attack_suite
from attack_suite import Client, compact, report


def round_trip(client, topic, mark):
    """Publishes `mark` on `topic` (one `client` subscribes to) and waits for it to come back through the broker."""
    client.publish(topic, {"mark": mark})
    return client.wait_for(lambda kind, fields: kind == "event" and fields["topic"] == topic and fields["body"].get("mark") == mark, 5) is not None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runtime-dir", required=True)
    parser.add_argument("--key", required=True, help="an allowlisted client's secret certificate (shieldbus keys new)")
    parser.add_argument("--flood", type=int, default=300)
    arguments = parser.parse_args()
    runtime = arguments.runtime_dir
    with open(runtime + "/endpoint", encoding="utf-8") as file:
        endpoint = file.read().strip()
    with open(runtime + "/cookie", encoding="utf-8") as file:
        cookie = file.read()
    server_public, _ = zmq.auth.load_certificate(runtime + "/broker.key")
    public, secret = zmq.auth.load_certificate(arguments.key)
    context = attack_suite.CONTEXT = zmq.Context()

    def allowed():
        return Client(endpoint, curve=(server_public, public, secret))

    # 1. An allowlisted key: no credential and the cookie admit it; any other credential is refused.
    bystander = allowed()
    answer = bystander.hello("bystander", "generic", ["x.bystander."])
    report("an allowlisted key presenting no credential is welcomed", answer and answer[0] == "welcome", str(answer))
    with_cookie = allowed()
    answer = with_cookie.hello("cookie-holder", "generic", credential=cookie)
    report("an allowlisted key presenting the cookie is welcomed", answer and answer[0] == "welcome", str(answer))
    with_cookie.close()
    for credential, label in (("0" * 64, "a guessed credential"), (cookie[:-1] + ("0" if cookie[-1] != "0" else "1"), "the cookie with its last byte changed"), ("", "an empty credential")):
        client = allowed()
        answer = client.hello("wrong-credential", "generic", credential=credential)
        report(f"an allowlisted key presenting {label} is refused not-admitted",
               answer and answer[0] == "error" and answer[1]["code"] == "not-admitted", str(answer))
        client.close()
    report("the allowlisted bystander is served after the wrong credentials", round_trip(bystander, "x.bystander.ping", "credentials"))

    # 2. A flood of random keys, each its own client, within about a second. A refused client would try again
    # every 100 ms (libzmq's reconnect): each tries once, so the broker sees exactly `flood` handshakes.
    flooders = []
    first = time.monotonic()
    for _ in range(arguments.flood):
        stranger_public, stranger_secret = zmq.curve_keypair()
        socket = context.socket(zmq.DEALER)
        socket.setsockopt(zmq.LINGER, 0)
        socket.setsockopt(zmq.RECONNECT_IVL, -1)
        socket.curve_serverkey, socket.curve_publickey, socket.curve_secretkey = server_public, stranger_public, stranger_secret
        socket.connect(endpoint)
        try:
            # Never waits: a refused handshake may already have closed the connection, and a DEALER without one
            # would block this send for good. The handshake itself is the attack; the message only asks.
            socket.send_multipart([b"status", compact({"v": 1})], flags=zmq.NOBLOCK)
        except zmq.Again:
            pass
        flooders.append(socket)
        time.sleep(1 / arguments.flood)  # the flood's pace: about a second for all of them
    last = time.monotonic()
    served = round_trip(bystander, "x.bystander.ping", "flood")
    report("the allowlisted bystander is served during the flood", served)
    answered = [socket for socket in flooders if socket.poll(0)]
    report(f"none of the {len(flooders)} random keys received anything", not answered, f"{len(answered)} answered")
    for socket in flooders:
        socket.close(0)
    report("the allowlisted bystander is served after the flood", round_trip(bystander, "x.bystander.ping", "after"))
    bystander.send("bye", {})
    bystander.close()
    print(json.dumps({"flood": {"keys": len(flooders), "seconds": round(last - first, 3)}}), flush=True)
    context.term()
    return 0


if __name__ == "__main__":
    sys.exit(main())
