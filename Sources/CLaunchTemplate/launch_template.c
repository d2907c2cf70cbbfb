// The template process of a plugin (Android's zygote): the broker starts the plugin's executable once, inside the
// plugin's sandbox, with SHIELDBUS_LAUNCH_CHANNEL set. This constructor runs after the dynamic loader has mapped and
// relocated everything and before any of the program's own code (Swift's `main`, its globals), and waits there. In a
// release program it runs after swiftrt's registration of the program's images and before the constructors linked
// after it (the Swift runtime's others, Foundation's, Dispatch's, libzmq's), which each launch runs itself; a debug
// build's shared libraries ran theirs before it (docs/architecture.md § 8). For each launch the broker sends the launch's environment; the template forks, and the child
// returns from the constructor with that environment, so the program starts from `main` as if just executed —
// fresh memory, no state of an earlier launch — without paying exec, loading and relocation again.
//
// The channel's messages (one datagram each; the broker's end has SO_PASSCRED, so the kernel adds each sender's
// pid as the broker sees it, across the sandbox's pid namespace):
//   template → broker  "ready <marker>"          serving
//   broker → template  "launch\n" K=V\0 K=V\0 …  fork one launch with this environment
//   child → broker     "started <pid>"           the launch runs (its pid inside the sandbox; the sender's outside)
//   template → broker  "ended <pid> <status>"    the launch ended (its wait status)
//   template → broker  "failed <errno>"          no launch: fork failed, the message was too large, every
//                                                launch slot is taken, or a mapping of code could not be
//                                                made read-only again (then every later one)
//   broker → template  "reset"                   (a template kept across explored days, started with
//                                                SHIELDBUS_LAUNCH_TEMPLATE_KEPT=1) end every process of the
//                                                sandbox and what they made in it (sandbox_reset.c)
//   template → broker  "reset"                   done: no launch runs, none of the ended ones is told
// The template ends when the broker closes the channel, and when a reset cannot bring its sandbox back as it started.
//
// Linux's fork copies no page-table entries of a file mapping that has no private pages, so each launch would fault the
// program's code and read-only data in again, a few pages at a time; and it copies every entry of one that has, each
// also torn down at the launch's exit. The first launches each start without the files' pages they inherited
// (`forgetInheritedPages`) and write, as they exit, which pages of the program's and its libraries' file mappings they
// had mapped (`tellMappedPages`, into shared memory made for that launch alone); once they all have, the template maps
// in its own page tables the pages most of them used, unmaps the files' others there (`keepLearnedPages`), and gives each
// mapping with such pages and no private page yet one, a copy of itself, so that every later fork copies exactly those
// entries. The
// program sees nothing of it but faults it no longer takes (and, in a learning launch, that shared memory among its
// mappings).
//
// Before it serves, the template runs the SDK's warm-up (LaunchTemplateWarmUp.swift, through a weak symbol): the Swift
// runtime's metadata of the generic types every launch makes first, made once here instead of in every launch. It
// makes no value of the program's, reads nothing of a launch's, and starts no thread (checked).
//
// A fork copies the thread-local ids the Swift runtime keeps as the owner of its locks: each launch forgets them first
// (thread_ids.c), found once here from the program's and its libraries' symbol tables.
//
// One file past 500 lines: the constructor, the channel and the learned pages share the template's static state, which
// no other code may touch before `main`.
#define _GNU_SOURCE
#include "launch_template.h"
#include "process_control.h"
#include "sandbox_reset.h"
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
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

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif

/// The mappings whose pages launches learn: the program's and its libraries' (private file mappings: code, read-only
/// data, data), as the loader left them before `main`. A launch writing a page of data still copies it for itself.
// A debug build's plugin maps about 150 (each Swift library's code, data and read-only data); past the bound, the
// rest are left to fault as before.
#define MAXIMUM_REGIONS 1024
/// `private`: the mapping has a page that is not the file's own, so a fork copies its page-table entries: a writable one
/// (data the loader relocated), or one the template made so.
static struct { uintptr_t start, end; int protection, private; } regions[MAXIMUM_REGIONS];
static int regionCount = 0;
static size_t regionPages = 0;
/// The system's page size: the unit of /proc/self/pagemap and madvise.
static size_t pageSize = 4096;
/// The launches that learn (a crashed one tells nothing, and the next learns instead), and how many of them must have
/// mapped a page for the template to keep it: a page one launch alone used (a path taken once, the pages its faults
/// mapped around) would be copied at every fork and torn down at every exit, for the few launches that use it.
#define LEARNING_LAUNCHES 3
#define LEARNED_BY 2
static int learnedLaunches = 0;
/// In the template, until its learning launches have all told: for each page of the regions, how many had it mapped.
static unsigned char *seenBy = NULL;
/// In a learning launch: its shared page of memory, written at exit, and its pid (a process it forks that exits
/// through exit() must not write it).
static unsigned char *learning = NULL;
static pid_t learningLaunch = 0;
/// Set when a region could not be made read-only again: the template stops serving (each launch is then a plain one),
/// so that no launch starts with a writable copy of code.
static int writableLeft = 0;

/// /proc/self/pagemap's bits of a page: mapped; the file's own (not a private copy, not anonymous memory).
#define PAGE_MAPPED (1ull << 63)
#define PAGE_OF_FILE (1ull << 61)

/// Calls `each` with the pagemap entry of each page of region `r` in order and the page's index in it, until `each`
/// returns nonzero; that value, 0 after the last page, or -1 when the pagemap could not be read on.
static int visitPages(int pagemap, int r, int (*each)(uint64_t entry, size_t index, void *context), void *context) {
    uint64_t entries[512];
    size_t first = regions[r].start / pageSize, pages = (regions[r].end - regions[r].start) / pageSize, done = 0;
    while (done < pages) {
        size_t count = pages - done < 512 ? pages - done : 512;
        ssize_t got = pread(pagemap, entries, count * 8, (off_t)((first + done) * 8));
        if (got <= 0) return -1;
        for (size_t i = 0; i < (size_t)got / 8; i++) {
            int stop = each(entries[i], done + i, context);
            if (stop) return stop;
        }
        done += (size_t)got / 8;
    }
    return 0;
}

static void findRegions(void) {
    long size = sysconf(_SC_PAGESIZE);
    if (size > 0) pageSize = (size_t)size;
    FILE *maps = fopen("/proc/self/maps", "re");
    if (!maps) return;
    char line[512];
    while (regionCount < MAXIMUM_REGIONS && fgets(line, sizeof line, maps)) {
        unsigned long start, end;
        char permissions[5];
        int path = 0;
        if (sscanf(line, "%lx-%lx %4s %*s %*s %*s %n", &start, &end, permissions, &path) < 3 || path == 0) continue;
        if (line[path] != '/' || permissions[3] != 'p' || permissions[0] != 'r') continue;
#if defined(__aarch64__)
        // mprotect without PROT_BTI would take branch target identification from the code: code is left to fault.
        if (permissions[2] == 'x') continue;
#endif
        regions[regionCount].start = start;
        regions[regionCount].end = end;
        regions[regionCount].protection = PROT_READ | (permissions[2] == 'x' ? PROT_EXEC : 0);
        // A writable one (data) has private pages already: the loader's relocations. Data the loader relocated and then
        // made read-only again (RELRO, r--p) is taken as the file's: its learning launches then keep the pages they
        // inherited of it, which left each later launch a fault or two fewer than forgetting them.
        regions[regionCount].private = permissions[1] == 'w';
        regionPages += (end - start) / pageSize;
        regionCount++;
    }
    fclose(maps);
    // A kernel without MADV_POPULATE_READ (before 5.14) cannot map the pages: nothing is learnt, and no region is
    // given a private page that would only make forks copy more.
    if (regionCount > 0 && madvise((void *)regions[0].start, pageSize, MADV_POPULATE_READ) != 0) regionCount = 0;
}

/// A learning launch's shared memory: its bits, then a byte set once they are written.
static size_t learningSize(void) { return ((regionPages + 7) / 8 + 1 + pageSize - 1) / pageSize * pageSize; }

/// Sets the bit of a mapped page; `context`: the region's first page's index among the regions' pages.
static int noteMappedPage(uint64_t entry, size_t index, void *context) {
    size_t bit = *(size_t *)context + index;
    if (entry & PAGE_MAPPED) learning[bit / 8] |= (unsigned char)(1u << (bit % 8));
    return 0;
}

/// At a learning launch's exit: a bit for each page of the regions that it has mapped (/proc/self/pagemap's present bit).
static void tellMappedPages(void) {
    if (getpid() != learningLaunch) return;
    int pagemap = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
    if (pagemap < 0) return;
    size_t base = 0;
    for (int r = 0; r < regionCount; r++) {
        if (visitPages(pagemap, r, noteMappedPage, &base) != 0) { close(pagemap); return; }  // told nothing
        base += (regions[r].end - regions[r].start) / pageSize;
    }
    close(pagemap);
    learning[learningSize() - 1] = 1;  // told
}

void shieldbus_end_process(int status) {
    if (!launchedFromTemplate) exit(status);
    // What the exit handlers would have run that matters: a learning launch's note of its pages (before the exit
    // handlers touch theirs, which no later launch needs), and the buffered output of C stdio (the plugin's log).
    if (learning) tellMappedPages();
    fflush(NULL);
    _exit(status);
}

/// What `settlePages` does to a run of pages.
enum { LEAVE, MAP, UNMAP };

static void endRun(int action, uintptr_t start, uintptr_t end) {
    if (action != LEAVE && end > start) madvise((void *)start, end - start, action == MAP ? MADV_POPULATE_READ : MADV_DONTNEED);
}

/// Maps (`MAP`) the pages of region `r` that `kept` keeps (those at least LEARNED_BY learning launches mapped; none when
/// it is NULL) and are not mapped, or unmaps (`UNMAP`) the files' pages it does not keep. A private copy is never unmapped,
/// so a page of data the loader relocated or the program wrote keeps its contents. `base`: the region's first page's
/// index among the regions' pages. Unmapping is a pass of its own: mapping a page maps its neighbours too (the kernel's
/// fault-around), which that pass then unmaps.
struct Settling { uintptr_t start; size_t base, visited; const unsigned char *kept; int action, running; uintptr_t runStart; };

/// One page of `settlePages`: ends the run before it when the page's action differs.
static int settlePage(uint64_t entry, size_t index, void *context) {
    struct Settling *s = context;
    int keep = s->kept && s->kept[s->base + index] >= LEARNED_BY, mapped = (entry & PAGE_MAPPED) != 0;
    int next = s->action == MAP ? (keep && !mapped ? MAP : LEAVE) : (!keep && mapped && (entry & PAGE_OF_FILE) ? UNMAP : LEAVE);
    s->visited = index + 1;
    if (next == s->running) return 0;
    uintptr_t here = s->start + index * pageSize;
    endRun(s->running, s->runStart, here);
    s->running = next;
    s->runStart = here;
    return 0;
}

static void settlePages(int pagemap, int r, size_t base, const unsigned char *kept, int action) {
    struct Settling s = {.start = regions[r].start, .base = base, .kept = kept, .action = action, .running = LEAVE, .runStart = regions[r].start};
    (void)visitPages(pagemap, r, settlePage, &s);  // a pagemap that cannot be read on leaves the rest as it is
    endRun(s.running, s.runStart, s.start + s.visited * pageSize);
}

/// In a learning launch, before the program runs: unmaps the files' pages it inherited (those of a region the template
/// made copied at fork: its own start's), so that what it tells at exit is what it used.
static void forgetInheritedPages(void) {
    int pagemap = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
    if (pagemap < 0) return;
    size_t base = 0;
    for (int r = 0; r < regionCount; r++) {
        if (regions[r].private) settlePages(pagemap, r, base, NULL, UNMAP);
        base += (regions[r].end - regions[r].start) / pageSize;
    }
    close(pagemap);
}

/// In the template: counts the pages a learning launch had mapped.
static void countLearnedPages(const unsigned char *learned) {
    if (!seenBy) seenBy = calloc(regionPages, 1);
    if (!seenBy) return;
    for (size_t bit = 0; bit < regionPages; bit++) seenBy[bit] += (learned[bit / 8] >> (bit % 8)) & 1;
}

/// In the template, once every learning launch has told: makes each region's mapped pages those most of them used, and
/// each region with such pages copied at fork (a region's entries are copied when it has private pages: its first page
/// becomes one, a copy of itself).
static void keepLearnedPages(void) {
    int pagemap = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
    if (pagemap < 0 || !seenBy) {
        if (pagemap >= 0) close(pagemap);
        return;
    }
    size_t base = 0;
    for (int r = 0; r < regionCount; r++) {
        size_t pages = (regions[r].end - regions[r].start) / pageSize, i = 0;
        while (i < pages && seenBy[base + i] < LEARNED_BY) i++;
        if (i < pages && !regions[r].private) {
            // Writable for a moment (and still executable if it was: this code may be in it).
            if (mprotect((void *)regions[r].start, regions[r].end - regions[r].start, regions[r].protection | PROT_WRITE) == 0) {
                volatile unsigned char *first = (unsigned char *)regions[r].start;
                *first = *first;
                if (mprotect((void *)regions[r].start, regions[r].end - regions[r].start, regions[r].protection) != 0) writableLeft = 1;
                regions[r].private = 1;
            }
        }
        // A region that forks do not copy keeps what the template mapped: no launch inherits it.
        if (regions[r].private) {
            settlePages(pagemap, r, base, seenBy, MAP);
            settlePages(pagemap, r, base, seenBy, UNMAP);
        }
        base += pages;
    }
    close(pagemap);
    free(seenBy);
    seenBy = NULL;
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

static pid_t launches[MAXIMUM_LAUNCHES];
/// The learning launch running, if any, and its memory; what the last one told, not yet mapped.
static pid_t learner = 0;
static unsigned char *learnerMemory = NULL, *learnt = NULL;

/// A launch ended: its slot is free, and a learning launch's memory waits to be mapped. Whether it was one.
static int launchEnded(pid_t pid) {
    for (int i = 0; i < MAXIMUM_LAUNCHES; i++) {
        if (launches[i] != pid) continue;
        launches[i] = 0;
        if (pid == learner) {
            // Mapped only when the next launch is asked for (below), which then waits for it.
            learnt = learnerMemory;
            learner = 0;
            learnerMemory = NULL;
        }
        return 1;
    }
    return 0;
}

static void endedByReset(int pid) { (void)launchEnded(pid); }

/// The SDK's warm-up (ShieldBusSDK's LaunchTemplateWarmUp): weak, so that a program without it has none.
extern void shieldbus_launch_template_warm_up(void) __attribute__((weak));
/// MonitorKit's part of it (MonitorKitWarmUp.swift), which the SDK's cannot name: weak too, as a program may not use it.
extern void shieldbus_monitor_kit_warm_up(void) __attribute__((weak));

/// The Swift runtime's override of `CommandLine.arguments` (the standard library's, Swift's calling convention; weak,
/// so that a program without Swift has none).
extern void _swift_stdlib_overrideUnsafeArgvArgc(char **argv, int argc) __attribute__((swiftcall, weak));


#ifdef __GLIBC__
// glibc passes the program's arguments to the constructors of the program it started (other C libraries need not).
__attribute__((constructor)) static void serveLaunchesIfAsked(int argc, char **argv, char **envp) {
    (void)envp;
#else
__attribute__((constructor)) static void serveLaunchesIfAsked(void) {
    int argc = 0;
    char **argv = NULL;
#endif
    const char *named = getenv(SHIELDBUS_LAUNCH_CHANNEL_VARIABLE);
    if (!named) return;
    if (!_swift_stdlib_overrideUnsafeArgvArgc || !argv)
        fprintf(stderr, "the launch template cannot hand its launches their arguments (no Swift runtime override, or a C library "
                        "that gives constructors none): a launch's CommandLine.arguments may be empty\n");
    int channel = atoi(named);
    if (shieldbus_thread_count() != 1) refuse("it runs more than one thread before main");
    sigset_t childEnded, original;
    sigemptyset(&childEnded);
    sigaddset(&childEnded, SIGCHLD);
    sigprocmask(SIG_BLOCK, &childEnded, &original);
    int ended = signalfd(-1, &childEnded, SFD_CLOEXEC | SFD_NONBLOCK);
    char *message = malloc(MAXIMUM_MESSAGE);
    if (ended < 0 || !message) refuse("no signalfd or memory");
    if (shieldbus_launch_template_warm_up) {
        shieldbus_launch_template_warm_up();
        if (shieldbus_monitor_kit_warm_up) shieldbus_monitor_kit_warm_up();
        if (shieldbus_thread_count() != 1) refuse("its warm-up started a thread");
    }
    // Each launch forgets the thread ids its runtime and libdispatch keep for their locks (thread_ids.c): they name this
    // process's thread, and a second thread of the launch meeting its main thread on a lock would spin for ever or trap.
    // A program whose caches cannot be found (stripped of its symbols) is launched plainly.
    char why[512];
    if (shieldbus_find_thread_ids(why, sizeof why) < 0) {
        char text[640];
        snprintf(text, sizeof text, "the thread ids its Swift runtime and libdispatch keep cannot be found (%s)", why);
        refuse(text);
    }
    findRegions();
    // Kept across explored days: what the sandbox holds now is what each day starts with; and no launch may reach
    // into the template's memory (ptrace needs it dumpable), which every later day's launches are forked from.
    const char *keptVariable = getenv("SHIELDBUS_LAUNCH_TEMPLATE_KEPT");
    int kept = keptVariable && keptVariable[0] == '1';
    if (kept) {
        if (shieldbus_sandbox_note_start() != 0) refuse("what its sandbox holds cannot be read");
        prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
    }
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
                if (!launchEnded(pid)) continue;
                // What the launch left running in its process group goes with it, as its sandbox would.
                kill(-pid, SIGKILL);
                char text[64];
                snprintf(text, sizeof text, "ended %d %d", (int)pid, status);
                say(channel, text);
            }
        }
        if (!waits[0].revents) continue;
        // MSG_TRUNC: the datagram's whole length, so that a launch message too large is refused, not cut short.
        ssize_t length = recv(channel, message, MAXIMUM_MESSAGE - 1, MSG_TRUNC);
        if (length < 0 && errno == EINTR) continue;
        if (length <= 0) _exit(0);  // the broker closed the channel (or is gone)
        static const char launch[] = "launch\n";
        if (kept && length == 5 && memcmp(message, "reset", 5) == 0) {
            int problem = shieldbus_sandbox_reset(endedByReset);
            struct signalfd_siginfo info;
            while (read(ended, &info, sizeof info) > 0) {}
            if (problem != 0) {
                refuseLaunch(channel, problem);
                _exit(0);  // its sandbox goes with it; the broker starts another
            }
            say(channel, "reset");
            continue;
        }
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
        // What a learning launch told is mapped when the next launch is asked for, not at its end: a run's last
        // launch (every plugin's only one on a day without restarts) then costs its template nothing more.
        if (learnt) {
            if (learnt[learningSize() - 1]) {  // told: it exited through exit()
                countLearnedPages(learnt);
                if (++learnedLaunches == LEARNING_LAUNCHES) keepLearnedPages();
            }
            munmap(learnt, learningSize());
            learnt = NULL;
        }
        if (writableLeft) {
            refuseLaunch(channel, EPERM);
            continue;
        }
        fflush(NULL);
        unsigned char *memory = NULL;
        if (learner == 0 && learnedLaunches < LEARNING_LAUNCHES && regionCount > 0) {
            memory = mmap(NULL, learningSize(), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
            if (memory == MAP_FAILED) memory = NULL;
        }
        pid_t child = fork();
        if (child < 0) {
            if (memory) munmap(memory, learningSize());
            refuseLaunch(channel, errno);
            continue;
        }
        if (child == 0) {
            shieldbus_forget_thread_ids();  // first: before any Swift code of the launch takes a lock
            if (memory) {
                forgetInheritedPages();
                learning = memory;
                learningLaunch = getpid();
                atexit(tellMappedPages);
            }
            close(ended);
            sigprocmask(SIG_SETMASK, &original, NULL);
            setpgid(0, 0);
            launchedFromTemplate = 1;
            applyEnvironment(message + sizeof launch - 1, (size_t)length - (sizeof launch - 1));
            free(message);
            // A launch's arguments are the template's (it was started with the plugin's command line). A release
            // program's runtime finds them after this constructor, by walking back from `environ` on the stack to the
            // argument vector; the launch's environment is now on the heap, so it would find none and the program
            // would start with no arguments at all — not even its name.
            if (_swift_stdlib_overrideUnsafeArgvArgc && argv) _swift_stdlib_overrideUnsafeArgvArgc(argv, argc);
            char text[64];
            snprintf(text, sizeof text, "started %d", (int)getpid());
            say(channel, text);
            close(channel);
            // Dumpable (as any launch) only once the channel is closed: another launch that could reach into this
            // one must not find the template's channel in it.
            if (kept) prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
            return;  // on to main, as a fresh launch
        }
        launches[slot] = child;
        if (memory) {
            // The learning launch's alone: a launch forked while it runs must not share it.
            madvise(memory, learningSize(), MADV_DONTFORK);
            learner = child;
            learnerMemory = memory;
        }
    }
}
