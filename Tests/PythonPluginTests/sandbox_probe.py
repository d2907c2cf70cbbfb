"""A plugin that tries what a hostile plugin would: read the bus cookie, other processes' environments and the
device's state, and reach the network. It writes what it found to probe.json in its home (its container) and exits;
SandboxTests reads it. It needs nothing but python3."""
import json
import os
import socket

found = {"pid": os.getpid()}
runtime = os.environ.get("SHIELDBUS_RUNTIME_DIR", "")
state = os.environ.get("SHIELDBUS_STATE_DIR", "")


def readable(path):
    try:
        with open(path, "rb") as handle:
            handle.read(1)
        return True
    except OSError:
        return False


found["cookie"] = readable(os.path.join(runtime, "cookie"))
found["runtime"] = sorted(os.listdir(runtime)) if os.path.isdir(runtime) else None
found["state"] = sorted(os.listdir(state)) if os.path.isdir(state) else None
found["deviceStore"] = readable(os.path.join(state, "device.sqlite"))
found["busStore"] = readable(os.path.join(state, "bus.sqlite"))
found["otherContainers"] = sorted(name for name in (os.listdir(os.path.join(state, "containers")) if os.path.isdir(os.path.join(state, "containers")) else [])
                                  if name != os.environ.get("SHIELDBUS_PLUGIN_NAME"))
# The App Groups and records of handled events it can see (each a folder), and another group's store and another
# plugin's record, named by the test, read and written directly.
def folders(path):
    return sorted(os.path.relpath(os.path.join(top, name), path) for top, names, _ in os.walk(path) for name in names)


found["appGroups"] = folders(os.path.join(state, "appgroups"))
found["cursors"] = folders(os.path.join(state, "cursors"))
found["otherGroupStore"] = readable(os.environ.get("PROBE_OTHER_STORE", "/nonexistent"))
# A record at a path of its own making, beside the folders it was given: refused, not kept in the sandbox's memory.
try:
    with open(os.path.join(state, "cursors", "made-up-record"), "wb") as handle:
        handle.write(b"x")
    found["madeUpRecord"] = "written"
except OSError as error:
    found["madeUpRecord"] = os.strerror(error.errno)
try:
    os.makedirs(os.path.dirname(os.environ["PROBE_OTHER_RECORD"]), exist_ok=True)
    with open(os.environ["PROBE_OTHER_RECORD"], "ab") as handle:
        handle.write(b"x")
    found["otherRecordWritten"] = True
except (OSError, KeyError):
    found["otherRecordWritten"] = False
# Every credential in every environment this process can read, but its own.
own = os.environ.get("SHIELDBUS_CREDENTIAL")
pids = [name for name in os.listdir("/proc") if name.isdigit()]
found["processes"] = len(pids)
others = []
for pid in pids:
    try:
        with open(f"/proc/{pid}/environ", "rb") as handle:
            for entry in handle.read().split(b"\0"):
                if entry.startswith(b"SHIELDBUS_CREDENTIAL=") and entry.split(b"=", 1)[1].decode() != own:
                    others.append(pid)
    except OSError:
        pass
found["otherCredentials"] = others
# A file of the user's, outside everything the plugin is given (the test names it).
found["userFile"] = readable(os.environ.get("PROBE_USER_FILE", "/nonexistent"))
port = int(os.environ.get("PROBE_PORT", "0"))
try:
    with socket.create_connection(("127.0.0.1", port), timeout=2):
        found["network"] = True
except OSError as error:
    found["network"] = False
    found["networkError"] = str(error)
# The sandbox's /etc: what a program needs, not the host's secrets; names still resolve through it.
found["etc"] = sorted(os.listdir("/etc"))
found["sslPrivate"] = os.path.exists("/etc/ssl/private")
found["certificates"] = os.path.isdir("/etc/ssl/certs") and len(os.listdir("/etc/ssl/certs")) > 0
try:
    found["localhost"] = socket.gethostbyname("localhost")
except OSError as error:
    found["localhost"] = str(error)
# /sys: only the processor counts (security.md § 9).
found["sys"] = sorted(os.path.join(folder, name)[len("/sys"):] for folder, _, names in os.walk("/sys") for name in names)
found["cpus"] = os.cpu_count()
# /dev: no terminal (the broker's controlling terminal would let it type into the shell that started the broker).
found["dev"] = sorted(os.listdir("/dev"))
home = os.environ["HOME"]
# Capabilities: a process holding them (a broker run by root, sandbox or not) could make a device node for the disk
# its home is on and mount it, which would show it everything.
with open("/proc/self/status") as handle:
    found["capabilities"] = next(int(line.split()[1], 16) for line in handle if line.startswith("CapEff:"))
node = os.path.join(home, "probe-disk")
try:
    os.mknod(node, 0o600 | 0o060000, os.stat(home).st_dev)  # S_IFBLK
    os.unlink(node)
    found["deviceNode"] = True
except OSError:
    found["deviceNode"] = False
with open(os.path.join(home, "probe.json.tmp"), "w") as handle:
    json.dump(found, handle)
os.rename(os.path.join(home, "probe.json.tmp"), os.path.join(home, "probe.json"))
