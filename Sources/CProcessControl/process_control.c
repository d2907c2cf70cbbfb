#define _GNU_SOURCE  // posix_spawn_file_actions_addclosefrom_np
#include "process_control.h"
#include <dirent.h>
#include <errno.h>
#include <malloc.h>
#include <spawn.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
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

__attribute__((noinline)) void shieldbus_keep(const void *pointer) { __asm__ volatile("" : : "r"(pointer) : "memory"); }
