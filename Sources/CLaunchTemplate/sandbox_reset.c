// A launch template kept for the days of an explore worker (PluginSandbox's kept sandboxes) starts each day as a new
// sandbox would: no process of an earlier day, nothing written in the sandbox's own memory, no System V object.
// The folders a day's plugin is given are the host's, emptied by the day itself (RunPlan); what is reset here is what
// lives only inside the sandbox: its root, /dev and /tmp (each a tmpfs bwrap made) and its ipc namespace (its System V
// objects, and its POSIX message queues at /dev/mqueue).
#define _GNU_SOURCE
#include "sandbox_reset.h"
#include <errno.h>
#include <ftw.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/// The sandbox's own memory: the file systems bwrap makes for it that stay writable (PluginSandbox.Plan: the root, `--tmpfs
/// /dev` with its `/dev/shm`, its ipc namespace's POSIX message queues at `/dev/mqueue`, `--tmpfs /tmp`). The hidden
/// folders' are remounted read-only.
static const char *const ownMemory[] = {"/", "/dev", "/dev/mqueue", "/tmp"};
#define OWN_MEMORY_COUNT (sizeof ownMemory / sizeof ownMemory[0])

/// What a start's entry must still be at a reset: the same file, with the same owner and permissions, and — for
/// anything but a folder, whose times move as entries come and go in it — the same contents' size and time.
struct Entry {
    dev_t device;
    ino_t inode;
    mode_t mode;
    uid_t owner;
    gid_t group;
    off_t size;
    struct timespec modified;
};

static struct Entry entryOf(const struct stat *status) {
    int folder = S_ISDIR(status->st_mode);
    return (struct Entry){status->st_dev, status->st_ino, status->st_mode, status->st_uid, status->st_gid,
                          folder ? 0 : status->st_size, folder ? (struct timespec){0, 0} : status->st_mtim};
}

static int isUnchanged(const struct Entry *start, const struct Entry *now) {
    return start->mode == now->mode && start->owner == now->owner && start->group == now->group &&
           start->size == now->size && start->modified.tv_sec == now->modified.tv_sec &&
           start->modified.tv_nsec == now->modified.tv_nsec;
}
static struct Entry *noted = NULL;
static size_t notedCount = 0, notedCapacity = 0;
static int noting = 0;
static size_t found = 0;
static int failure = 0;

/// The start's entry for this file, if it was there at the start.
static const struct Entry *startEntry(const struct stat *status) {
    for (size_t i = 0; i < notedCount; i++) {
        if (noted[i].device == status->st_dev && noted[i].inode == status->st_ino) return &noted[i];
    }
    return NULL;
}

static int visit(const char *path, const struct stat *status, int kind, struct FTW *where) {
    (void)kind;
    if (where->level == 0) return 0;  // the mount point itself: a mount of the sandbox, never removed
    if (noting) {
        if (notedCount == notedCapacity) {
            size_t capacity = notedCapacity ? notedCapacity * 2 : 64;
            struct Entry *grown = realloc(noted, capacity * sizeof *noted);
            if (!grown) {
                failure = ENOMEM;
                return 1;
            }
            noted = grown;
            notedCapacity = capacity;
        }
        noted[notedCount++] = entryOf(status);
        return 0;
    }
    const struct Entry *start = startEntry(status);
    if (start) {
        struct Entry now = entryOf(status);
        if (isUnchanged(start, &now)) found++;  // one changed counts as missing: the sandbox is not used again
        return 0;
    }
    // Made since the start: removed (depth first, so a folder is empty by now).
    if (remove(path) != 0 && errno != ENOENT) failure = errno;
    return 0;
}

/// Walks each of the sandbox's own file systems without crossing into another mount (bound files and folders,
/// /proc, the hidden folders), children before their folder.
static int walk(void) {
    for (size_t i = 0; i < OWN_MEMORY_COUNT; i++) {
        if (nftw(ownMemory[i], visit, 16, FTW_PHYS | FTW_MOUNT | FTW_DEPTH) != 0 && !failure) failure = errno ? errno : EIO;
    }
    return failure;
}

int shieldbus_sandbox_note_start(void) {
    noting = 1;
    failure = 0;
    notedCount = 0;
    int result = walk();
    noting = 0;
    return result;
}

/// Removes every System V shared memory segment, semaphore set and message queue of the sandbox's ipc namespace
/// (its POSIX message queues are files of /dev/mqueue, removed by the walk).
static void removeSystemVObjects(void) {
    struct shm_info shared;
    int highest = shmctl(0, SHM_INFO, (struct shmid_ds *)&shared);
    for (int index = 0; index <= highest; index++) {
        struct shmid_ds status;
        int id = shmctl(index, SHM_STAT, &status);
        if (id >= 0) shmctl(id, IPC_RMID, NULL);
    }
    struct seminfo semaphores;
    highest = semctl(0, 0, SEM_INFO, &semaphores);
    for (int index = 0; index <= highest; index++) {
        struct semid_ds status;
        int id = semctl(index, 0, SEM_STAT, &status);
        if (id >= 0) semctl(id, 0, IPC_RMID);
    }
    struct msginfo messages;
    highest = msgctl(0, MSG_INFO, (struct msqid_ds *)&messages);
    for (int index = 0; index <= highest; index++) {
        struct msqid_ds status;
        int id = msgctl(index, MSG_STAT, &status);
        if (id >= 0) msgctl(id, IPC_RMID, NULL);
    }
}

int shieldbus_sandbox_reset(void (*ended)(int pid)) {
    // Only the pid namespace's first process reaches every other one with kill(-1) (and inherits their orphans).
    if (getpid() != 1 || !noted) return EPERM;
    kill(-1, SIGKILL);
    for (;;) {
        int status;
        pid_t pid = waitpid(-1, &status, 0);
        if (pid > 0) {
            ended(pid);
            continue;
        }
        if (errno == EINTR) continue;
        break;  // ECHILD: none is left
    }
    removeSystemVObjects();
    failure = 0;
    found = 0;
    if (walk() != 0) return failure;
    // Something noted at the start was removed, replaced (a link /lib made to point elsewhere) or changed (its
    // permissions, owner or contents): this sandbox is not as it started, and is not used again.
    return found == notedCount ? 0 : ENOTRECOVERABLE;
}
