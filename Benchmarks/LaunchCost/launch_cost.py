#!/usr/bin/env python3
"""The CPU of one plugin launch, by path (docs/benchmarks.md, "Explore and launches"): a release monitor's bare start
(the loader, the runtime, its options missing, exit) N times, executed in a new bwrap sandbox each time as a plain
launch is, forked from a template held in one sandbox as `LaunchTemplates` does (the channel's messages of
Sources/CLaunchTemplate), and executed without a sandbox. Usage: launch_cost.py [N] [program] (default 50,
.build/release/activity-monitor). Counts what the launched processes and bwrap used (getrusage of reaped children),
not this script. A template launch is its own cost: a template started and ended without a launch, measured beside each
round, is taken from the round (a run starts a template once per plugin, explore once per worker), and shown apart."""
import atexit, os, resource, shutil, socket, subprocess, sys, tempfile
root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
N = int(sys.argv[1]) if len(sys.argv) > 1 else 50
program = sys.argv[2] if len(sys.argv) > 2 else root + '/.build/release/activity-monitor'
folder = os.path.dirname(program)
# The sandbox's namespaces and system mounts (PluginSandbox.Plan), without a plugin's state folders.
sandbox = ['bwrap', '--die-with-parent', '--unshare-pid', '--unshare-ipc', '--unshare-uts', '--unshare-cgroup-try', '--as-pid-1', '--cap-drop', 'ALL',
           '--ro-bind', '/usr', '/usr']
for top in ['/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32']:
    if os.path.islink(top): sandbox += ['--symlink', os.readlink(top), top]
    else: sandbox += ['--ro-bind-try', top, top]
# The sandbox's /etc and /sys as SandboxEtc makes them: folders of copies, one read-only mount each (bwrap reads the
# mount table again at every mount, so a bind per file would overstate a sandbox's cost).
views = tempfile.mkdtemp(prefix='launch-cost-')
atexit.register(shutil.rmtree, views, True)
os.makedirs(views + '/etc')
for f in ['ld.so.cache', 'passwd', 'group', 'nsswitch.conf']:
    if os.path.exists('/etc/' + f): shutil.copyfile('/etc/' + f, views + '/etc/' + f)
if os.path.islink('/etc/localtime'): os.symlink(os.readlink('/etc/localtime'), views + '/etc/localtime')
elif os.path.exists('/etc/localtime'): shutil.copyfile('/etc/localtime', views + '/etc/localtime')
sandbox += ['--ro-bind', views + '/etc', '/etc']
# The processor counts (PluginSandbox.processorCountFiles): without them glibc and libdispatch compose the counts from
# /proc/stat at every start.
os.makedirs(views + '/sys/devices/system/cpu')
for f in ['possible', 'online']:
    if os.path.exists('/sys/devices/system/cpu/' + f): shutil.copyfile('/sys/devices/system/cpu/' + f, views + '/sys/devices/system/cpu/' + f)
sandbox += ['--ro-bind', views + '/sys', '/sys']
sandbox += ['--proc', '/proc', '--tmpfs', '/dev']
for node in ['null', 'zero', 'full', 'random', 'urandom']: sandbox += ['--dev-bind-try', '/dev/' + node, '/dev/' + node]
for link, target in [('fd', '/proc/self/fd'), ('stdin', '/proc/self/fd/0'), ('stdout', '/proc/self/fd/1'), ('stderr', '/proc/self/fd/2')]:
    sandbox += ['--symlink', target, '/dev/' + link]
sandbox += ['--dir', '/dev/shm', '--tmpfs', '/tmp', '--ro-bind', folder, folder, '--chdir', '/']
env = {'PATH': '/usr/bin:/bin', 'SHIELDBUS_PLUGIN_NAME': 'monitor', 'SHIELDBUS_PLUGIN_ROLE': 'monitor',
       'SHIELDBUS_PLUGIN_OPTIONS_FILE': '/nonexistent.json', 'SHIELDBUS_SUPERVISED': '1', 'SHIELDBUS_SANDBOX': 'bubblewrap'}
null = open('/dev/null', 'w')
def cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime, r.ru_minflt, r.ru_stime
def per(before, after, n): return (after[0] - before[0]) / n * 1000, (after[1] - before[1]) / n, (after[2] - before[2]) / n * 1000
def less(total, part, n): return tuple((t - p) / n for t, p in zip(total, part))

def plain(n, wrap):
    b = cpu()
    for _ in range(n):
        subprocess.run((sandbox + ['--', program]) if wrap else [program], env=env, stdout=null, stderr=null)
    return per(b, cpu(), n)

def template(n):
    """What a template's start and n launches from it used, in total (ms, faults, ms)."""
    b = cpu()
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    ours.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
    def hand_down(): os.dup2(theirs.fileno(), 5)
    # As LaunchTemplate starts a sandboxed template: the runtime told at once that no crash backtracer is to be found,
    # and the loader to bind every symbol at the template's start.
    p = subprocess.Popen(sandbox + ['--', program], env=dict(env, SHIELDBUS_LAUNCH_CHANNEL='5', SWIFT_BACKTRACE='enable=no,swift-backtrace=', LD_BIND_NOW='1'),
                         stdout=null, stderr=null,
                         preexec_fn=hand_down, pass_fds=[theirs.fileno()])
    theirs.close()
    assert ours.recv(256).startswith(b'ready')
    started_at = cpu()
    message = b'launch\n' + b''.join(f'{k}={v}'.encode() + b'\0' for k, v in env.items())
    for _ in range(n):
        ours.send(message)
        assert ours.recv(256).startswith(b'started')
        assert ours.recv(256).startswith(b'ended')
    ours.close()
    p.wait()
    return per(b, cpu(), 1)

plain(3, True); template(3)  # the page cache warm for both
rounds = []
for r in range(3):
    rounds.append(('bwrap + exec', plain(N, True)))
    start = template(0)
    rounds.append(('template fork', less(template(N), start, N)))
    rounds.append(("the template's own start (once)", start))
    rounds.append(('exec, no sandbox', plain(N, False)))
for name in ['bwrap + exec', 'template fork', "the template's own start (once)", 'exec, no sandbox']:
    xs = sorted(v for k, v in rounds if k == name)
    print(f'{name}: CPU {", ".join("%.2f ms (%.0f faults, %.2f ms system)" % x for x in xs)}')
