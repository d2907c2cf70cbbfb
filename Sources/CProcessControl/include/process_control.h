// CProcessControl: the Linux calls Swift's Glibc module does not expose — dying with one's parent, handing freed heap back,
// keeping freed heap, closing every inherited descriptor in a spawned child.
#ifndef SHIELDBUS_PROCESS_CONTROL_H
#define SHIELDBUS_PROCESS_CONTROL_H

#include <spawn.h>

/// Asks the kernel to send `signal` to this process when its parent dies (prctl PR_SET_PDEATHSIG).
/// Returns 0 on success, -1 with errno set on failure.
int shieldbus_die_with_parent(int signal);

/// Hands the heap's free pages back to the kernel (glibc's malloc_trim): after a large structure is freed, the
/// process's resident memory shrinks instead of staying at its peak.
void shieldbus_release_free_heap(void);

/// Lets the heap keep up to `bytes` free at its top instead of handing it back to the kernel, and serves blocks below
/// `bytes` from the heap instead of mapping each one (glibc's mallopt M_TRIM_THRESHOLD and M_MMAP_THRESHOLD).
/// Returns 1 on success, 0 when glibc refused a value.
int shieldbus_keep_freed_heap(int bytes);

/// Adds to `actions` the closing of every descriptor from `lowest` up in the child (glibc's
/// posix_spawn_file_actions_addclosefrom_np, 2.34 and later). Returns 0, or an error number (ENOSYS before glibc 2.34).
int shieldbus_spawn_close_from(posix_spawn_file_actions_t *actions, int lowest);

#endif
