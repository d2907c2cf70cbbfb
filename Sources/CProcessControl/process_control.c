#define _GNU_SOURCE  // posix_spawn_file_actions_addclosefrom_np
#include "process_control.h"
#include <errno.h>
#include <malloc.h>
#include <spawn.h>
#include <sys/prctl.h>

int shieldbus_die_with_parent(int signal) {
    return prctl(PR_SET_PDEATHSIG, signal, 0, 0, 0);
}

void shieldbus_release_free_heap(void) {
    malloc_trim(0);
}

int shieldbus_keep_freed_heap(int bytes) {
    return mallopt(M_TRIM_THRESHOLD, bytes) && mallopt(M_MMAP_THRESHOLD, bytes);
}

int shieldbus_spawn_close_from(posix_spawn_file_actions_t *actions, int lowest) {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
    return posix_spawn_file_actions_addclosefrom_np(actions, lowest);
#else
    (void)actions; (void)lowest;
    return ENOSYS;
#endif
}
