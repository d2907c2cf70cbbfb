#include "process_control.h"
#include <malloc.h>
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
