// A folder's entries by name, found without following a symbolic link below a given folder: an App-Group store's
// check that no part of it is a link, in a few calls instead of an `lstat` of every part's whole path.
#define _GNU_SOURCE
#include "process_control.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SYS_openat2
#define SYS_openat2 437
#endif

/// `below` opened as a folder under `root`, refusing a symbolic link anywhere on the way (ELOOP).
static int openBelow(const char *root, const char *below) {
    if (below[0] == 0) return open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int top = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (top < 0) return -1;
    struct open_how how = {.flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC, .resolve = RESOLVE_NO_SYMLINKS};
    int folder = (int)syscall(SYS_openat2, top, below, &how, sizeof how);
    // A kernel without openat2 says ENOSYS; a seccomp filter that does not know it, often EPERM.
    int error = folder < 0 && (errno == ENOSYS || errno == EPERM) ? ENOSYS : errno;
    close(top);
    errno = error;
    return folder;
}

/// Notes the kind of the entry `name` if it is one of `names`.
static void note(int folder, const char *name, unsigned char type, const char *names, int count, unsigned char *kinds) {
    const char *asked = names;
    for (int i = 0; i < count; i++, asked += strlen(asked) + 1) {
        if (strcmp(name, asked) != 0) continue;
        if (type == DT_UNKNOWN) {  // a file system that does not say: asked of the entry itself
            struct stat status;
            if (fstatat(folder, name, &status, AT_SYMLINK_NOFOLLOW) != 0) return;
            type = S_ISLNK(status.st_mode) ? DT_LNK : DT_REG;
        }
        kinds[i] = type == DT_LNK ? 1 : 2;
        return;
    }
}

int shieldbus_folder_entry_kinds(const char *root, const char *below, const char *names, int count, unsigned char *kinds) {
    memset(kinds, 0, (size_t)count);
    int folder = openBelow(root, below);
    if (folder < 0) return -1;
    int error;
    // getdents64's records: an 8-byte inode, an 8-byte offset, a 2-byte length, a type byte, the name.
    _Alignas(8) char buffer[4096];
    for (;;) {
        long length = syscall(SYS_getdents64, folder, buffer, sizeof buffer);
        if (length < 0) {
            error = errno;
            close(folder);
            errno = error;
            return -1;
        }
        if (length == 0) break;
        for (long at = 0; at < length;) {
            unsigned short size;
            memcpy(&size, buffer + at + 16, sizeof size);
            note(folder, buffer + at + 19, (unsigned char)buffer[at + 18], names, count, kinds);
            at += size;
        }
    }
    close(folder);
    return 0;
}
