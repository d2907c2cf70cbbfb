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
#include <string.h>
#include <fcntl.h>
#include <sys/xattr.h>
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

/// What a start's entry must still be at a reset: the same file at the same path, with the same owner and
/// permissions; anything but a folder also unchanged since (its change time: a write, a new name or link, new
/// permissions, times or extended attributes all set it). A folder's change time moves as entries come and go in it, so
/// its extended attributes are compared by their list's size, and its times are given back at each reset.
struct Entry {
    char *path;
    dev_t device;
    ino_t inode;
    mode_t mode;
    uid_t owner;
    gid_t group;
    struct timespec changed;
    struct timespec times[2];  // accessed, modified: given back to a folder
    ssize_t attributes;
};

static struct Entry entryOf(const char *path, const struct stat *status) {
    int folder = S_ISDIR(status->st_mode);
    return (struct Entry){NULL, status->st_dev, status->st_ino, status->st_mode, status->st_uid, status->st_gid,
                          folder ? (struct timespec){0, 0} : status->st_ctim, {status->st_atim, status->st_mtim},
                          folder ? llistxattr(path[0] ? path : "/", NULL, 0) : 0};
}

static int isUnchanged(const struct Entry *start, const char *path, const struct Entry *now) {
    return strcmp(start->path, path) == 0 && start->mode == now->mode && start->owner == now->owner &&
           start->group == now->group && start->changed.tv_sec == now->changed.tv_sec &&
           start->changed.tv_nsec == now->changed.tv_nsec && start->attributes == now->attributes;
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
    if (kind == FTW_NS) {  // no status: nothing can be said of it
        failure = EIO;
        return 0;
    }
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
        struct Entry entry = entryOf(path, status);
        entry.path = strdup(path);
        if (!entry.path) {
            failure = ENOMEM;
            return 1;
        }
        noted[notedCount++] = entry;
        return 0;
    }
    const struct Entry *start = startEntry(status);
    if (start) {
        struct Entry now = entryOf(path, status);
        if (isUnchanged(start, path, &now)) found++;  // one changed counts as missing: the sandbox is not used again
        // Its entries are dealt with by now (depth first): its times as they were at the start.
        // (nftw names the root `/` by an empty path.)
        if (S_ISDIR(status->st_mode) && utimensat(AT_FDCWD, path[0] ? path : "/", start->times, AT_SYMLINK_NOFOLLOW) != 0) failure = errno;
        return 0;
    }
    // Made since the start: removed (depth first, so a folder is empty by now). A mount's own root is always noted.
    if (where->level == 0) {
        failure = EIO;
        return 0;
    }
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

/// Finds every System V shared memory segment, semaphore set and message queue of the sandbox's ipc namespace, and
/// removes each when `removing` (its POSIX message queues are files of /dev/mqueue, removed by the walk): how many it
/// found.
static int systemVObjects(int removing) {
    int count = 0;
    struct shm_info shared;
    int highest = shmctl(0, SHM_INFO, (struct shmid_ds *)&shared);
    for (int index = 0; index <= highest; index++) {
        struct shmid_ds status;
        int id = shmctl(index, SHM_STAT, &status);
        if (id < 0) continue;
        count++;
        if (removing) shmctl(id, IPC_RMID, NULL);
    }
    struct seminfo semaphores;
    highest = semctl(0, 0, SEM_INFO, &semaphores);
    for (int index = 0; index <= highest; index++) {
        struct semid_ds status;
        int id = semctl(index, 0, SEM_STAT, &status);
        if (id < 0) continue;
        count++;
        if (removing) semctl(id, 0, IPC_RMID);
    }
    struct msginfo messages;
    highest = msgctl(0, MSG_INFO, (struct msqid_ds *)&messages);
    for (int index = 0; index <= highest; index++) {
        struct msqid_ds status;
        int id = msgctl(index, MSG_STAT, &status);
        if (id < 0) continue;
        count++;
        if (removing) msgctl(id, IPC_RMID, NULL);
    }
    return count;
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
    systemVObjects(1);
    // One that could not be removed stays for the next day: this sandbox is not used again.
    if (systemVObjects(0) != 0) return ENOTRECOVERABLE;
    failure = 0;
    found = 0;
    if (walk() != 0) return failure;
    // Something noted at the start was removed, replaced (a link /lib made to point elsewhere), moved or changed (its
    // permissions, owner, contents, times or attributes): this sandbox is not as it started, and is not used again.
    return found == notedCount ? 0 : ENOTRECOVERABLE;
}
