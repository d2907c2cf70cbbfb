// The broker template of `shieldbus explore` (Android's zygote, for the broker): one `shieldbus broker-template`
// process per explore worker, executed once, which reads the configuration and warms the runtime, then forks a child per
// day that plays it as `shieldbus run` would from `main` — without paying exec, the loader, relocations and the
// first uses again. Everything here runs while the template has one thread (checked before each fork): a fork copies
// only the calling thread, so a lock another thread held would stay held in the child forever.
//
// Explore's channel to the template is a SOCK_SEQPACKET socket (descriptor 3 of the template). Messages:
//   explore → template  "play\n" DAY\0 ARG\0 …  + descriptors [reply, stderr]   play one day: `shieldbus ARG…`
//                                                                               (DAY names it in the day's errors)
//   template → reply    "started <pid>"          + the child's pidfd            the day's process runs
//   template → reply    "ended <pid> <status>"                                  it ended (its wait status)
//   template → reply    "failed <errno>"                                        no child: fork failed, the request
//                                                                               was too large, every slot is taken
// Each request brings its own reply socket, so explore's workers never read each other's answers, and a template
// that dies closes every reply socket: a worker waiting for its day sees the end of the socket, not silence.
//
// The template is the day's parent and reaps it (so explore hears its exit status from the template, not from wait);
// explore signals the day through the pidfd the template opened on its still-unreaped child, which can only ever name
// that process. A child dies with its template (PR_SET_PDEATHSIG, SIGKILL): a template gone means no one would report
// the day's end, and explore plays it again by exec. The template ends when explore closes the channel (or is gone).
// A day forgets the thread ids the Swift runtime and libdispatch keep for their locks, which name the template's thread
// (thread_ids.c).
#define _GNU_SOURCE
#include "process_control.h"
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/// The most days alive at once that the template tracks (explore plays `--jobs` at once).
#define MAXIMUM_DAYS 256
/// The largest request: a day's arguments are a dozen paths.
#define MAXIMUM_REQUEST (64 * 1024)

int shieldbus_message_pair(int descriptors[2]) {
    return socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, descriptors);
}

long shieldbus_send_with_descriptors(int descriptor, const void *bytes, unsigned long size, const int *passed, int count) {
    union {
        struct cmsghdr header;
        char space[CMSG_SPACE(sizeof(int) * 4)];
    } control;
    if (count < 0 || count > 4) {
        errno = EINVAL;
        return -1;
    }
    memset(&control, 0, sizeof control);
    struct iovec part = {.iov_base = (void *)bytes, .iov_len = size};
    struct msghdr message = {.msg_iov = &part, .msg_iovlen = 1};
    if (count > 0) {
        message.msg_control = &control;
        message.msg_controllen = CMSG_SPACE(sizeof(int) * count);
        struct cmsghdr *header = CMSG_FIRSTHDR(&message);
        header->cmsg_level = SOL_SOCKET;
        header->cmsg_type = SCM_RIGHTS;
        header->cmsg_len = CMSG_LEN(sizeof(int) * count);
        memcpy(CMSG_DATA(header), passed, sizeof(int) * count);
    }
    ssize_t sent;
    do {
        sent = sendmsg(descriptor, &message, MSG_NOSIGNAL);
    } while (sent < 0 && errno == EINTR);
    return sent;
}

/// Receives one message and the descriptors attached to it (at most `capacity`; any more are closed). Returns its
/// length, with `truncated` set when it was longer than `size`.
static long receiveWithDescriptors(int descriptor, void *buffer, unsigned long size, int *passed, int capacity, int *received,
                                   int *truncated) {
    union {
        struct cmsghdr header;
        char space[CMSG_SPACE(sizeof(int) * 8)];
    } control;
    struct iovec part = {.iov_base = buffer, .iov_len = size};
    struct msghdr message = {.msg_iov = &part, .msg_iovlen = 1, .msg_control = &control, .msg_controllen = sizeof control};
    *received = 0;
    ssize_t length;
    do {
        length = recvmsg(descriptor, &message, MSG_CMSG_CLOEXEC);
    } while (length < 0 && errno == EINTR);
    if (length < 0) return -1;
    if (truncated) *truncated = (message.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) != 0;
    for (struct cmsghdr *header = CMSG_FIRSTHDR(&message); header; header = CMSG_NXTHDR(&message, header)) {
        if (header->cmsg_level != SOL_SOCKET || header->cmsg_type != SCM_RIGHTS) continue;
        int *descriptors = (int *)CMSG_DATA(header);
        for (size_t i = 0; i < (header->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++) {
            if (*received < capacity) passed[(*received)++] = descriptors[i];
            else close(descriptors[i]);
        }
    }
    return length;
}

long shieldbus_receive_with_descriptor(int descriptor, void *buffer, unsigned long size, int *passed) {
    int received;
    long length = receiveWithDescriptors(descriptor, buffer, size, passed, 1, &received, NULL);
    if (received == 0) *passed = -1;
    return length;
}

static int spawnWithChannel(const char *path, char *const arguments[], int channel, int *pid);

int shieldbus_allowed_cores(int *cores, int capacity) {
    cpu_set_t allowed;
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return -1;
    int count = 0;
    for (int core = 0; core < CPU_SETSIZE && count < capacity; core++) {
        if (CPU_ISSET(core, &allowed)) cores[count++] = core;
    }
    return count;
}

int shieldbus_spawn_with_channel(const char *path, char *const arguments[], int channel, int core, int *pid, int *notHeld) {
    // A child starts with the affinity of the thread that spawns it (posix_spawn has no attribute for it): the calling
    // thread is held on `core` for the spawn and given its own back, so the child is on that core from its first
    // instruction, before it starts anything that would inherit another placement.
    *notHeld = 0;
    cpu_set_t original;
    int held = 0;
    if (core >= 0) {
        cpu_set_t one;
        CPU_ZERO(&one);
        if (core >= CPU_SETSIZE) *notHeld = EINVAL;
        else if (sched_getaffinity(0, sizeof original, &original) != 0) *notHeld = errno;
        else {
            CPU_SET(core, &one);
            if (sched_setaffinity(0, sizeof one, &one) != 0) *notHeld = errno;
            else held = 1;
        }
    }
    int result = spawnWithChannel(path, arguments, channel, pid);
    if (held) (void)sched_setaffinity(0, sizeof original, &original);
    return result;
}

static int spawnWithChannel(const char *path, char *const arguments[], int channel, int *pid) {
    // posix_spawn's dup2 onto the descriptor it already is would keep its close-on-exec flag.
    int source = channel == 3 ? fcntl(channel, F_DUPFD_CLOEXEC, 4) : channel;
    if (source < 0) return errno;
    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attributes;
    posix_spawn_file_actions_init(&actions);
    posix_spawnattr_init(&attributes);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, source, 3);
    // Without closefrom (glibc before 2.34) the descriptors explore opens close-on-exec are still not inherited.
    (void)shieldbus_spawn_close_from(&actions, 4);
    // A process group of its own: a Ctrl-C at the terminal reaches explore, which ends the days and the template.
    sigset_t none;
    sigemptyset(&none);
    posix_spawnattr_setsigmask(&attributes, &none);
    posix_spawnattr_setpgroup(&attributes, 0);
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK);
    extern char **environ;
    int result = posix_spawn(pid, path, &actions, &attributes, arguments, environ);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attributes);
    if (source != channel) close(source);
    return result;
}

static void say(int reply, const char *text, int passed) {
    (void)shieldbus_send_with_descriptors(reply, text, strlen(text), &passed, passed >= 0 ? 1 : 0);
}

static void refuse(int reply, int error) {
    char text[64];
    snprintf(text, sizeof text, "failed %d", error);
    say(reply, text, -1);
}

struct Day {
    pid_t pid;
    int reply;
};

long shieldbus_serve_days(int channel, char **arguments, int *problem, void (*beforeFork)(void *), void *context) {
    *problem = 0;
    // Descriptor 3 came without close-on-exec (to be inherited); nothing the days execute may keep it.
    if (fcntl(channel, F_SETFD, FD_CLOEXEC) != 0) {
        *problem = errno;
        fprintf(stderr, "shieldbus broker-template: descriptor %d is not explore's channel: %s\n", channel, strerror(errno));
        return -1;
    }
    sigset_t childEnded, original;
    sigemptyset(&childEnded);
    sigaddset(&childEnded, SIGCHLD);
    sigprocmask(SIG_BLOCK, &childEnded, &original);
    int ended = signalfd(-1, &childEnded, SFD_CLOEXEC | SFD_NONBLOCK);
    char *message = malloc(MAXIMUM_REQUEST + 1);
    static struct Day days[MAXIMUM_DAYS];
    pid_t template = getpid();
    if (ended < 0 || !message) {
        *problem = ended < 0 ? errno : ENOMEM;
        fprintf(stderr, "shieldbus broker-template: no signalfd or memory: %s\n", strerror(*problem));
        return -1;
    }
    for (;;) {
        struct pollfd waits[2] = {{.fd = channel, .events = POLLIN}, {.fd = ended, .events = POLLIN}};
        if (poll(waits, 2, -1) < 0) {
            if (errno == EINTR) continue;
            *problem = errno;
            fprintf(stderr, "shieldbus broker-template: poll: %s\n", strerror(errno));
            return -1;
        }
        if (waits[1].revents) {
            struct signalfd_siginfo info;
            while (read(ended, &info, sizeof info) > 0) {}
            int status;
            pid_t pid;
            while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
                for (int i = 0; i < MAXIMUM_DAYS; i++) {
                    if (days[i].pid != pid) continue;
                    char text[64];
                    snprintf(text, sizeof text, "ended %d %d", (int)pid, status);
                    say(days[i].reply, text, -1);
                    close(days[i].reply);
                    days[i].pid = 0;
                }
            }
        }
        if (!waits[0].revents) continue;
        int passed[2], received, truncated;
        long length = receiveWithDescriptors(channel, message, MAXIMUM_REQUEST, passed, 2, &received, &truncated);
        if (length < 0 && (errno == EINTR || errno == EAGAIN)) continue;
        if (length <= 0) return -1;  // explore closed the channel (or is gone): the days in play die with the template
        static const char play[] = "play\n";
        int wellFormed = received == 2 && (size_t)length >= sizeof play - 1 && memcmp(message, play, sizeof play - 1) == 0;
        if (!wellFormed) {
            // Not explore's (explore sends nothing else): nothing to answer on.
            for (int i = 0; i < received; i++) close(passed[i]);
            continue;
        }
        int reply = passed[0], errors = passed[1];
        int slot = 0;
        while (slot < MAXIMUM_DAYS && days[slot].pid != 0) slot++;
        int refusal = truncated ? E2BIG : slot == MAXIMUM_DAYS ? EAGAIN : 0;
        // The day forks what the template holds then (its kept launch templates, one that ended started again).
        if (refusal == 0 && beforeFork) beforeFork(context);
        // A day forgets the thread ids the runtime and libdispatch keep for their locks (thread_ids.c), found again only
        // when a library was loaded since; a template that cannot find them, or whose libdispatch started a thread,
        // plays no day by fork.
        char why[512];
        if (refusal == 0 && shieldbus_find_thread_ids(why, sizeof why) < 0) {
            *problem = errno;
            fprintf(stderr, "shieldbus broker-template: the thread ids the Swift runtime and libdispatch keep cannot be found (%s), so a forked day's threads could "
                            "spin or trap on their locks; explore plays the days by exec\n", why);
            return -1;
        }
        if (refusal == 0 && shieldbus_thread_count() != 1) {
            fprintf(stderr, "shieldbus broker-template: the template runs more than one thread and cannot fork; explore plays the days by exec\n");
            *problem = EDEADLK;
            return -1;
        }
        pid_t child = refusal ? -1 : (fflush(NULL), fork());
        if (child < 0) {
            refuse(reply, refusal ? refusal : errno);
            close(reply);
            close(errors);
            continue;
        }
        if (child == 0) {
            shieldbus_forget_thread_ids();  // first: before any Swift code of the day takes a lock
            // A template gone means no one reports this day's end; explore plays it again by exec.
            prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
            if (getppid() != template) _exit(70);
            close(ended);
            close(channel);
            close(reply);
            for (int i = 0; i < MAXIMUM_DAYS; i++) if (days[i].pid != 0) close(days[i].reply);
            sigprocmask(SIG_SETMASK, &original, NULL);
            // Its own process group, as the executed `shieldbus run` has.
            setpgid(0, 0);
            dup2(errors, STDERR_FILENO);
            close(errors);
            int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
            if (null >= 0) {
                dup2(null, STDOUT_FILENO);
                close(null);
            }
            size_t size = (size_t)length - (sizeof play - 1);
            memmove(message, message + sizeof play - 1, size);
            message[size] = 0;
            *arguments = message;
            return (long)size;
        }
        // Opened before the child can be reaped (this loop reaps it), so it names that child.
        int descriptor = (int)syscall(SYS_pidfd_open, child, 0);
        char text[64];
        snprintf(text, sizeof text, "started %d", (int)child);
        say(reply, text, descriptor);
        if (descriptor >= 0) close(descriptor);
        close(errors);
        days[slot] = (struct Day){.pid = child, .reply = reply};
    }
}
