// CProcessControl: the Linux calls Swift's Glibc module does not expose — dying with one's parent, handing freed heap back,
// keeping freed heap, closing every inherited descriptor in a spawned child, the launch templates' channels (a
// datagram socket that tells each sender's pid, and an epoll set the broker's loop waits on), and process descriptors
// (a signal that can only reach the process it was opened for, never one that reused its pid), and the broker template
// that plays explore's days (broker_template.c), the thread ids a forked child must forget (thread_ids.c), and whether
// libdispatch signalled work on the main queue and a thread's run loop was made (main_queue.c).
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

/// Makes a pair of connected Unix SOCK_SEQPACKET sockets, both close-on-exec; on `ours` the kernel tells each message's
/// sender (SO_PASSCRED). Returns 0, or -1 with errno set.
int shieldbus_launch_channel(int descriptors[2]);

/// Receives one message without waiting (`wait`: 0) or waiting for it: its length (0 when the other end closed), or
/// -1 with errno set (EAGAIN: nothing waits). `sender` is the pid of the process that sent it, as this process's pid
/// namespace numbers it (0 when the kernel told none).
long shieldbus_receive_from(int descriptor, void *buffer, unsigned long size, int *sender, int wait);

/// Sends one message without raising SIGPIPE: the bytes sent, or -1 with errno set.
long shieldbus_send_message(int descriptor, const void *bytes, unsigned long count);

/// Whether `haystack` holds `needle` (glibc's memmem).
int shieldbus_contains(const void *haystack, unsigned long size, const void *needle, unsigned long count);

/// Makes an epoll set (close-on-exec): a descriptor that polls readable while any descriptor it watches does.
int shieldbus_watch_set(void);

/// Adds `descriptor` to the set (readable, level-triggered), or removes it. Returns 0, or -1 with errno set.
int shieldbus_watch(int set, int descriptor);
int shieldbus_unwatch(int set, int descriptor);

/// Opens a descriptor for process `pid` (pidfd_open, close-on-exec): it keeps naming that process after it ends and
/// is reaped, whoever gets its pid next. Returns the descriptor, or -1 with errno set (ESRCH: no such process).
int shieldbus_process_descriptor(int pid);

/// Sends `signal` to the process `descriptor` names (pidfd_send_signal). Returns 0, or -1 with errno set (ESRCH: it
/// ended).
int shieldbus_signal_process(int descriptor, int signal);

/// Makes a pair of connected Unix SOCK_SEQPACKET sockets, both close-on-exec. Returns 0, or -1 with errno set.
int shieldbus_message_pair(int descriptors[2]);

/// Sends one message with `count` descriptors attached (SCM_RIGHTS), without raising SIGPIPE. Returns the bytes sent,
/// or -1 with errno set.
long shieldbus_send_with_descriptors(int descriptor, const void *bytes, unsigned long size, const int *passed, int count);

/// Waits for one message and takes at most one descriptor attached to it (close-on-exec; -1 in `passed` when none
/// came; any more are closed). Returns its length (0 when the other end closed), or -1 with errno set.
long shieldbus_receive_with_descriptor(int descriptor, void *buffer, unsigned long size, int *passed);

/// Starts `path` with `arguments` (NULL-terminated) and this process's environment, in a process group of its own,
/// with its standard output on /dev/null, `channel` as its descriptor 3 and no other descriptor above standard error.
/// With `core` ≥ 0 it runs on that processor only, and so does every process and thread it starts (they inherit its
/// affinity); when it cannot be held there, `notHeld` gets why (an error number) and it starts where the scheduler puts
/// it. -1 leaves it to the scheduler. Returns 0 with `pid` set, or an error number.
int shieldbus_spawn_with_channel(const char *path, char *const arguments[], int channel, int core, int *pid, int *notHeld);

/// The processors this process's calling thread may run on (`sched_getaffinity`), in increasing order: at most
/// `capacity` of them written to `cores`. Returns how many, or -1 with errno set.
int shieldbus_allowed_cores(int *cores, int capacity);

/// How many threads this process runs (-1 when /proc cannot tell): forking is safe only while it is one, since a fork
/// copies only the calling thread and a lock another thread held stays held in the child forever.
int shieldbus_thread_count(void);

/// Finds the thread ids the Swift runtime, Synchronization's Mutex and libdispatch keep for the calling thread
/// (thread_ids.c), from the symbol tables of the program and its libraries, so that a child this thread forks can forget
/// them. Called by a template's one thread before it serves; again when a library was loaded since (cheap otherwise).
/// Returns how many of the Swift caches, or -1 with errno set and `why` saying which object could not be read (stripped
/// of its symbols, say), that no runtime cache was found, or that libdispatch started a thread in this process (its
/// queues cannot then be used in a forked child): a template that cannot find them must not fork Swift code.
int shieldbus_find_thread_ids(char *why, unsigned long size);

/// In a child just forked by the thread that found them: sets each to 0 ("not read yet"), so that the child's locks
/// name its own thread, not the template's, and has libdispatch bind its main queue again to the id it then reads (its
/// fork hook, `dispatch_atfork_child`) when it had read one. The forking thread must hold no Swift or libdispatch lock
/// (its word names the template, which the child can then not unlock): both templates fork from C, outside any.
void shieldbus_forget_thread_ids(void);

/// The broker template's loop (broker_template.c): serves requests on `channel` until explore closes it, forking a
/// child per request. Returns in each child, with the request's arguments (NUL-separated, malloc'ed) in `arguments`:
/// their length, its standard error the day's file and its standard output /dev/null. Returns -1 in the template
/// when it should end: `problem` 0 when explore closed the channel, else an error number (said on standard error).
/// `beforeFork` (or NULL) is called with `context` in the template before each day is forked; it must start no thread.
long shieldbus_serve_days(int channel, char **arguments, int *problem, void (*beforeFork)(void *), void *context);

/// What the folder `below` (folders relative to the folder `root`, no `..`; "" for `root` itself) holds under each of
/// `names` (`count` names, each ended by a NUL, one after the other), found without following a symbolic link below `root` (openat2's
/// RESOLVE_NO_SYMLINKS, then one read of the folder's entries): `kinds[i]` is 0 when nothing is there, 1 for a symbolic
/// link, 2 for anything else. Returns 0; or -1 with errno set: ELOOP when a folder of `below` is a symbolic link,
/// ENOENT or ENOTDIR when one is missing or no folder (nothing is below it), ENOSYS when the kernel has no openat2
/// (before Linux 5.6, or refused by a seccomp filter), or the error of the open or read.
int shieldbus_folder_entry_kinds(const char *root, const char *below, const char *names, int count, unsigned char *kinds);

/// Whether work waits on the main queue (`DispatchQueue.main.async`, `@MainActor` jobs, a due `asyncAfter`): libdispatch
/// has signalled its run-loop handle and no turn of the main run loop has drained it since. Costs one `poll`, where a
/// turn of the run loop costs many times that (main_queue.c).
int shieldbus_main_queue_is_signalled(void);

/// Whether the calling thread's run loop (`RunLoop.current`, on the main thread `RunLoop.main`) was made: a timer or a
/// block scheduled on a run loop needs it made, so a loop never made holds nothing but the main queue's signalled work.
/// Asked without making it, which a process's first `RunLoop.main` does at some cost (main_queue.c).
int shieldbus_run_loop_exists(void);

/// Does nothing with `pointer`, out of the optimiser's sight: a template's warm-up (the launch template's, the broker
/// template's) hands it what it makes, so that the making is not left out.
void shieldbus_keep(const void *pointer);

#endif
