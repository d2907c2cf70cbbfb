// The template process of a plugin (Android's zygote): the broker starts the plugin's executable once, inside the
// plugin's sandbox, with SHIELDBUS_LAUNCH_CHANNEL set. This constructor runs after the dynamic loader has mapped and
// relocated everything and before any of the program's own code (Swift's `main`, its globals, Foundation, libzmq),
// and waits there. For each launch the broker sends the launch's environment; the template forks, and the child
// returns from the constructor with that environment, so the program starts from `main` as if just executed —
// fresh memory, no state of an earlier launch — without paying exec, loading and relocation again.
//
// The channel's messages (one datagram each; the broker's end has SO_PASSCRED, so the kernel adds each sender's
// pid as the broker sees it, across the sandbox's pid namespace):
//   template → broker  "ready <marker>"          serving
//   broker → template  "launch\n" K=V\0 K=V\0 …  fork one launch with this environment
//   child → broker     "started <pid>"           the launch runs (its pid inside the sandbox; the sender's outside)
//   template → broker  "ended <pid> <status>"    the launch ended (its wait status)
//   template → broker  "failed <errno>"          no launch: fork failed, the message was too large, or
//                                                every launch slot is taken
// The template ends when the broker closes the channel.
#define _GNU_SOURCE
#include "launch_template.h"
#include "process_control.h"
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

static int launchedFromTemplate = 0;

/// What a template says first, in an ELF section of its own: the broker finds the section's name among the
/// executable's section headers, and so knows the program can serve as a template without reading it all.
__attribute__((section("shieldbus_launch_template"), used)) static const char ready[] = "ready " SHIELDBUS_LAUNCH_TEMPLATE_MARKER;

int shieldbus_launched_from_template(void) { return launchedFromTemplate; }

/// The most launches alive at once that the template tracks (a short-lived extension has one; a restart two).
#define MAXIMUM_LAUNCHES 64
/// The largest launch message: an environment of this size.
#define MAXIMUM_MESSAGE (256 * 1024)

static void say(int channel, const char *text) {
    while (send(channel, text, strlen(text), MSG_NOSIGNAL) < 0 && errno == EINTR) {}
}

/// Tells the broker this launch did not happen (it launches the plugin plainly).
static void refuseLaunch(int channel, int error) {
    char text[64];
    snprintf(text, sizeof text, "failed %d", error);
    say(channel, text);
}

static void refuse(const char *why) {
    fprintf(stderr, "the launch template cannot serve: %s; the broker launches this plugin plainly\n", why);
    _exit(70);  // EX_SOFTWARE
}

/// In the child: the launch's environment replaces the template's.
static void applyEnvironment(char *variables, size_t length) {
    clearenv();
    size_t start = 0;
    while (start < length) {
        char *variable = variables + start;
        size_t size = strnlen(variable, length - start);
        char *equals = memchr(variable, '=', size);
        if (equals && size < length - start) {
            *equals = 0;
            setenv(variable, equals + 1, 1);
        }
        start += size + 1;
    }
}

__attribute__((constructor)) static void serveLaunchesIfAsked(void) {
    const char *named = getenv(SHIELDBUS_LAUNCH_CHANNEL_VARIABLE);
    if (!named) return;
    int channel = atoi(named);
    if (shieldbus_thread_count() != 1) refuse("it runs more than one thread before main");
    sigset_t childEnded, original;
    sigemptyset(&childEnded);
    sigaddset(&childEnded, SIGCHLD);
    sigprocmask(SIG_BLOCK, &childEnded, &original);
    int ended = signalfd(-1, &childEnded, SFD_CLOEXEC | SFD_NONBLOCK);
    char *message = malloc(MAXIMUM_MESSAGE);
    if (ended < 0 || !message) refuse("no signalfd or memory");
    pid_t launches[MAXIMUM_LAUNCHES] = {0};
    say(channel, ready);
    for (;;) {
        struct pollfd waits[2] = {{.fd = channel, .events = POLLIN}, {.fd = ended, .events = POLLIN}};
        if (poll(waits, 2, -1) < 0) {
            if (errno == EINTR) continue;
            _exit(71);
        }
        if (waits[1].revents) {
            struct signalfd_siginfo info;
            while (read(ended, &info, sizeof info) > 0) {}
            int status;
            pid_t pid;
            while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
                for (int i = 0; i < MAXIMUM_LAUNCHES; i++) {
                    if (launches[i] != pid) continue;
                    launches[i] = 0;
                    // What the launch left running in its process group goes with it, as its sandbox would.
                    kill(-pid, SIGKILL);
                    char text[64];
                    snprintf(text, sizeof text, "ended %d %d", (int)pid, status);
                    say(channel, text);
                }
            }
        }
        if (!waits[0].revents) continue;
        // MSG_TRUNC: the datagram's whole length, so that a launch message too large is refused, not cut short.
        ssize_t length = recv(channel, message, MAXIMUM_MESSAGE - 1, MSG_TRUNC);
        if (length < 0 && errno == EINTR) continue;
        if (length <= 0) _exit(0);  // the broker closed the channel (or is gone)
        static const char launch[] = "launch\n";
        if ((size_t)length > MAXIMUM_MESSAGE - 1) {
            refuseLaunch(channel, E2BIG);
            continue;
        }
        if ((size_t)length < sizeof launch - 1 || memcmp(message, launch, sizeof launch - 1) != 0) continue;
        message[length] = 0;
        int slot = 0;
        while (slot < MAXIMUM_LAUNCHES && launches[slot] != 0) slot++;
        if (slot == MAXIMUM_LAUNCHES) {
            // A launch the template could not track would never be said to have ended: refused, launched plainly.
            refuseLaunch(channel, EAGAIN);
            continue;
        }
        fflush(NULL);
        pid_t child = fork();
        if (child < 0) {
            refuseLaunch(channel, errno);
            continue;
        }
        if (child == 0) {
            close(ended);
            sigprocmask(SIG_SETMASK, &original, NULL);
            setpgid(0, 0);
            launchedFromTemplate = 1;
            applyEnvironment(message + sizeof launch - 1, (size_t)length - (sizeof launch - 1));
            free(message);
            char text[64];
            snprintf(text, sizeof text, "started %d", (int)getpid());
            say(channel, text);
            close(channel);
            return;  // on to main, as a fresh launch
        }
        launches[slot] = child;
    }
}
