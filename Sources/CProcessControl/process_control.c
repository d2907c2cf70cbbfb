#define _GNU_SOURCE  // posix_spawn_file_actions_addclosefrom_np
#include "process_control.h"
#include <dirent.h>
#include <errno.h>
#include <malloc.h>
#include <stdlib.h>
#include <pthread.h>
#include <sched.h>
#include <spawn.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>

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

// A thread's nice value and policy are its own (PRIO_PROCESS and sched_setscheduler with 0 name the calling thread on
// Linux), and a child copies those of the thread that spawned it. The thread that spawns is also the child's parent
// for PR_SET_PDEATHSIG (bwrap's --die-with-parent): the child is killed when that thread ends, so each scheduling's
// spawner thread lives as long as the process.
struct spawn_request {
    pid_t *pid;
    const char *path;
    const posix_spawn_file_actions_t *actions;
    const posix_spawnattr_t *attributes;
    char *const *arguments;
    char *const *environment;
    int result;
    int done;
};

struct spawner {
    int niceIncrement;
    int policy;
    pthread_mutex_t lock;
    pthread_cond_t changed;
    struct spawn_request *request;
};

enum { spawnerLimit = 8 };
static struct spawner *spawners[spawnerLimit];
static pthread_mutex_t spawnersLock = PTHREAD_MUTEX_INITIALIZER;

static void *serve_spawns(void *context) {
    struct spawner *spawner = context;
    // Named, so that a reader of /proc tells it from the threads that do the broker's work.
    pthread_setname_np(pthread_self(), "qos-spawner");
    errno = 0;
    int nice = getpriority(PRIO_PROCESS, 0);
    int problem = errno;
    if (problem == 0 && spawner->niceIncrement != 0 && setpriority(PRIO_PROCESS, 0, nice + spawner->niceIncrement) != 0) problem = errno;
    struct sched_param parameters = {.sched_priority = 0};
    if (problem == 0 && spawner->policy != SCHED_OTHER && sched_setscheduler(0, spawner->policy, &parameters) != 0) problem = errno;
    // A thread that could not lower its scheduling answers every request with why.
    pthread_mutex_lock(&spawner->lock);
    for (;;) {
        while (spawner->request == NULL || spawner->request->done) pthread_cond_wait(&spawner->changed, &spawner->lock);
        struct spawn_request *request = spawner->request;
        request->result = problem != 0 ? problem
            : posix_spawn(request->pid, request->path, request->actions, request->attributes, request->arguments, request->environment);
        request->done = 1;
        pthread_cond_broadcast(&spawner->changed);
    }
    return NULL;
}

// The spawner of one scheduling, started at its first use; NULL with `error` set when it cannot be.
static struct spawner *spawner_for(int niceIncrement, int policy, int *error) {
    pthread_mutex_lock(&spawnersLock);
    struct spawner *found = NULL;
    int index = 0;
    for (; index < spawnerLimit && spawners[index] != NULL; index++) {
        if (spawners[index]->niceIncrement == niceIncrement && spawners[index]->policy == policy) { found = spawners[index]; break; }
    }
    if (found == NULL) {
        *error = index == spawnerLimit ? EAGAIN : 0;
        struct spawner *made = *error == 0 ? calloc(1, sizeof *made) : NULL;
        if (*error == 0 && made == NULL) *error = ENOMEM;
        if (made != NULL) {
            made->niceIncrement = niceIncrement;
            made->policy = policy;
            pthread_mutex_init(&made->lock, NULL);
            pthread_cond_init(&made->changed, NULL);
            pthread_t thread;
            pthread_attr_t attributes;
            pthread_attr_init(&attributes);
            pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);
            *error = pthread_create(&thread, &attributes, serve_spawns, made);
            pthread_attr_destroy(&attributes);
            if (*error == 0) spawners[index] = found = made;
            else free(made);
        }
    }
    pthread_mutex_unlock(&spawnersLock);
    return found;
}

int shieldbus_spawn_scheduled(pid_t *pid, const char *path, const posix_spawn_file_actions_t *actions,
                              const posix_spawnattr_t *attributes, char *const arguments[], char *const environment[],
                              int niceIncrement, int policy) {
    if (niceIncrement == 0 && policy == SCHED_OTHER) {
        return posix_spawn(pid, path, actions, attributes, arguments, environment);
    }
    int error = 0;
    struct spawner *spawner = spawner_for(niceIncrement, policy, &error);
    if (spawner == NULL) return error;
    struct spawn_request request = {pid, path, actions, attributes, arguments, environment, 0, 0};
    pthread_mutex_lock(&spawner->lock);
    // One request at a time per spawner: a second caller waits for the first's answer.
    while (spawner->request != NULL && !spawner->request->done) pthread_cond_wait(&spawner->changed, &spawner->lock);
    spawner->request = &request;
    pthread_cond_broadcast(&spawner->changed);
    while (!request.done) pthread_cond_wait(&spawner->changed, &spawner->lock);
    if (spawner->request == &request) spawner->request = NULL;
    pthread_cond_broadcast(&spawner->changed);
    pthread_mutex_unlock(&spawner->lock);
    return request.result;
}

int shieldbus_launch_channel(int descriptors[2]) {
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, descriptors) != 0) return -1;
    int on = 1;
    return setsockopt(descriptors[0], SOL_SOCKET, SO_PASSCRED, &on, sizeof on);
}

long shieldbus_receive_from(int descriptor, void *buffer, unsigned long size, int *sender, int wait) {
    union {
        struct cmsghdr header;
        char space[CMSG_SPACE(sizeof(struct ucred))];
    } control;
    struct iovec part = {.iov_base = buffer, .iov_len = size};
    struct msghdr message = {.msg_iov = &part, .msg_iovlen = 1, .msg_control = &control, .msg_controllen = sizeof control};
    *sender = 0;
    ssize_t length;
    do {
        length = recvmsg(descriptor, &message, MSG_CMSG_CLOEXEC | (wait ? 0 : MSG_DONTWAIT));
    } while (length < 0 && errno == EINTR);
    if (length < 0) return -1;
    for (struct cmsghdr *header = CMSG_FIRSTHDR(&message); header; header = CMSG_NXTHDR(&message, header)) {
        if (header->cmsg_level == SOL_SOCKET && header->cmsg_type == SCM_CREDENTIALS) {
            struct ucred credentials;
            memcpy(&credentials, CMSG_DATA(header), sizeof credentials);
            *sender = credentials.pid;
        } else if (header->cmsg_level == SOL_SOCKET && header->cmsg_type == SCM_RIGHTS) {
            // Descriptors nobody asked for (a hostile plugin's) are closed, not kept.
            int *passed = (int *)CMSG_DATA(header);
            for (size_t i = 0; i < (header->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++) close(passed[i]);
        }
    }
    return length;
}

long shieldbus_send_message(int descriptor, const void *bytes, unsigned long count) {
    ssize_t sent;
    do {
        sent = send(descriptor, bytes, count, MSG_NOSIGNAL);
    } while (sent < 0 && errno == EINTR);
    return sent;
}

int shieldbus_contains(const void *haystack, unsigned long size, const void *needle, unsigned long count) {
    return memmem(haystack, size, needle, count) != NULL;
}

int shieldbus_watch_set(void) {
    return epoll_create1(EPOLL_CLOEXEC);
}

int shieldbus_watch(int set, int descriptor) {
    struct epoll_event event = {.events = EPOLLIN, .data.fd = descriptor};
    return epoll_ctl(set, EPOLL_CTL_ADD, descriptor, &event);
}

int shieldbus_unwatch(int set, int descriptor) {
    return epoll_ctl(set, EPOLL_CTL_DEL, descriptor, NULL);
}

int shieldbus_process_descriptor(int pid) {
    return (int)syscall(SYS_pidfd_open, pid, 0);
}

int shieldbus_signal_process(int descriptor, int signal) {
    return (int)syscall(SYS_pidfd_send_signal, descriptor, signal, NULL, 0);
}

int shieldbus_thread_count(void) {
    DIR *tasks = opendir("/proc/self/task");
    if (!tasks) return -1;
    int count = 0;
    struct dirent *entry;
    while ((entry = readdir(tasks)) != NULL) if (entry->d_name[0] != '.') count++;
    closedir(tasks);
    return count;
}
