// Timed waits under the device clock: the C library's waits that take an absolute real-time deadline, defined here so
// that a deadline computed from the device clock keeps its meaning. The caller read "now" from the device clock
// (`Date()`, `clock_gettime(CLOCK_REALTIME)` — libdispatch's semaphores and wall timers, Foundation's `NSCondition`),
// while the kernel measures the deadline by the host's clock: a device clock behind the host's would end every such
// wait at once (a wall timer firing in a loop), one ahead would make a 5-second wait last until the host's clock caught
// up. Each deadline is moved by the device clock's lead over the host's at the call, so the wait lasts the time the
// caller asked for in host seconds; a wall-clock timer is set for when the device clock reaches its deadline. Waits on
// monotonic clocks, and every wait while the device clock is not set, pass unchanged.
#define _GNU_SOURCE
#include "device_clock_internal.h"
#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <sys/timerfd.h>
#include <time.h>

#define NANOSECONDS_PER_SECOND 1000000000

/// The C library's definition of `name`, found once (`RTLD_NEXT`: past this program's own).
#define LIBRARY_FUNCTION(type, name)                                                       \
    static type library_##name(void) {                                                     \
        static _Atomic(type) found = NULL;                                                 \
        type function = atomic_load_explicit(&found, memory_order_acquire);                \
        if (function == NULL) {                                                            \
            function = (type)dlsym(RTLD_NEXT, #name);                                      \
            atomic_store_explicit(&found, function, memory_order_release);                 \
        }                                                                                  \
        return function;                                                                   \
    }

typedef int (*sem_clockwait_function)(sem_t *, clockid_t, const struct timespec *);
typedef int (*cond_clockwait_function)(pthread_cond_t *, pthread_mutex_t *, clockid_t, const struct timespec *);
typedef int (*mutex_clocklock_function)(pthread_mutex_t *, clockid_t, const struct timespec *);
typedef int (*clock_nanosleep_function)(clockid_t, int, const struct timespec *, struct timespec *);
typedef int (*timerfd_create_function)(int, int);
typedef int (*timerfd_settime_function)(int, int, const struct itimerspec *, struct itimerspec *);

// The `clock` forms only: `pthread_cond_timedwait` has two versions in the C library (an unversioned look-up may find
// the old condition variables' one), and each `timed` form is its `clock` form on CLOCK_REALTIME.
LIBRARY_FUNCTION(sem_clockwait_function, sem_clockwait)
LIBRARY_FUNCTION(cond_clockwait_function, pthread_cond_clockwait)
LIBRARY_FUNCTION(mutex_clocklock_function, pthread_mutex_clocklock)
LIBRARY_FUNCTION(clock_nanosleep_function, clock_nanosleep)
LIBRARY_FUNCTION(timerfd_create_function, timerfd_create)
LIBRARY_FUNCTION(timerfd_settime_function, timerfd_settime)

/// How a deadline read from the device clock is put on the host's.
typedef enum {
    /// The same time from now, in host seconds: what a timeout means, and libdispatch turns its monotonic timeouts
    /// into such deadlines.
    SAME_TIME_FROM_NOW,
    /// When the device clock reaches it (a wall-clock timer, which Dispatch fires only once the device clock is past
    /// it): in scaled time, its distance ÷ the clock's speed; while the clock holds still, never — until the clock is
    /// set again, which wakes every armed wall timer to be judged afresh.
    WHEN_THE_DEVICE_CLOCK_REACHES_IT,
} deadline_meaning;

/// `deadline` on the host's clock, saturating at the range's ends. Unchanged when the device clock is not set, or
/// `deadline` is not a valid time (the C library then says EINVAL itself).
static const struct timespec *host_deadline(const struct timespec *deadline, deadline_meaning meaning, struct timespec *moved) {
    int64_t device;
    double rate;
    if (deadline == NULL || deadline->tv_nsec < 0 || deadline->tv_nsec >= NANOSECONDS_PER_SECOND) return deadline;
    if (!shieldbus_device_nanoseconds(&device, &rate)) return deadline;
    struct timespec host;
    shieldbus_host_gettime(CLOCK_REALTIME, &host);
    // In long double: a deadline's seconds may be anything a time_t holds (a wait "forever"), and the distance is
    // kept to the nanosecond across centuries (64 bits of mantissa).
    long double distance = ((long double)deadline->tv_sec - (long double)(device / NANOSECONDS_PER_SECOND)) * NANOSECONDS_PER_SECOND
        + (long double)(deadline->tv_nsec - device % NANOSECONDS_PER_SECOND);
    if (meaning == WHEN_THE_DEVICE_CLOCK_REACHES_IT) {
        // Held still, the clock reaches it only when it is set again, which wakes the timers
        // (`shieldbus_wall_timers_clock_moved`): until then, never.
        if (rate == 0 && distance > 0) distance = (long double)INT64_MAX * NANOSECONDS_PER_SECOND;
        else if (rate > 0) distance /= rate;
    }
    long double target = (long double)host.tv_sec * NANOSECONDS_PER_SECOND + host.tv_nsec + distance;
    if (target <= 0) {
        // Long past: over at once, as the caller's was.
        moved->tv_sec = 0;
        moved->tv_nsec = 0;
    } else if (target >= (long double)INT64_MAX * NANOSECONDS_PER_SECOND) {
        moved->tv_sec = (time_t)INT64_MAX;  // never
        moved->tv_nsec = 0;
    } else {
        long double seconds = floorl(target / NANOSECONDS_PER_SECOND);
        moved->tv_sec = (time_t)seconds;
        moved->tv_nsec = (long)(target - seconds * NANOSECONDS_PER_SECOND);
        if (moved->tv_nsec >= NANOSECONDS_PER_SECOND) moved->tv_nsec = NANOSECONDS_PER_SECOND - 1;
        if (moved->tv_nsec < 0) moved->tv_nsec = 0;
    }
    return moved;
}

/// `deadline` on the host's clock when it is on `clock`'s real-time one.
static const struct timespec *host_deadline_on(clockid_t clock, const struct timespec *deadline, struct timespec *moved) {
    return clock == CLOCK_REALTIME ? host_deadline(deadline, SAME_TIME_FROM_NOW, moved) : deadline;
}

int sem_clockwait(sem_t *restrict semaphore, clockid_t clock, const struct timespec *restrict deadline) {
    struct timespec moved;
    return library_sem_clockwait()(semaphore, clock, host_deadline_on(clock, deadline, &moved));
}

int sem_timedwait(sem_t *restrict semaphore, const struct timespec *restrict deadline) {
    return sem_clockwait(semaphore, CLOCK_REALTIME, deadline);
}

int pthread_cond_clockwait(pthread_cond_t *restrict condition, pthread_mutex_t *restrict mutex, clockid_t clock,
                           const struct timespec *restrict deadline) {
    struct timespec moved;
    return library_pthread_cond_clockwait()(condition, mutex, clock, host_deadline_on(clock, deadline, &moved));
}

int pthread_cond_timedwait(pthread_cond_t *restrict condition, pthread_mutex_t *restrict mutex,
                           const struct timespec *restrict deadline) {
    // The condition's clock (`pthread_condattr_setclock`), where the C library keeps it: bit 1 of `__wrefs`.
    clockid_t clock = (__atomic_load_n(&condition->__data.__wrefs, __ATOMIC_RELAXED) & 2) ? CLOCK_MONOTONIC : CLOCK_REALTIME;
    return pthread_cond_clockwait(condition, mutex, clock, deadline);
}

int pthread_mutex_clocklock(pthread_mutex_t *restrict mutex, clockid_t clock, const struct timespec *restrict deadline) {
    struct timespec moved;
    return library_pthread_mutex_clocklock()(mutex, clock, host_deadline_on(clock, deadline, &moved));
}

int pthread_mutex_timedlock(pthread_mutex_t *restrict mutex, const struct timespec *restrict deadline) {
    return pthread_mutex_clocklock(mutex, CLOCK_REALTIME, deadline);
}

int clock_nanosleep(clockid_t clock, int flags, const struct timespec *request, struct timespec *remaining) {
    struct timespec moved;
    if (flags & TIMER_ABSTIME) request = host_deadline_on(clock, request, &moved);
    return library_clock_nanosleep()(clock, flags, request, remaining);
}

/// Which descriptors are timers on the real-time clock (libdispatch's wall timers): set at each `timerfd_create`,
/// so a number reused by another timer is told afresh (a descriptor `dup2`'d onto one is not: libdispatch and
/// Foundation never do). Descriptors past the table are left as they are. Dispatch arms them on a thread of its own,
/// which reads the process's device clock: not a hosted plugin's thread's own.
#define TRACKED_TIMERS 4096
static _Atomic unsigned char real_time_timers[TRACKED_TIMERS];
/// One past the highest descriptor ever marked: the clock's moves look no further.
static _Atomic int tracked_end = 0;

int timerfd_create(int clock, int flags) {
    int descriptor = library_timerfd_create()(clock, flags);
    if (descriptor >= 0 && descriptor < TRACKED_TIMERS) {
        atomic_store_explicit(&real_time_timers[descriptor], clock == CLOCK_REALTIME, memory_order_relaxed);
        if (clock == CLOCK_REALTIME) {
            int end = atomic_load_explicit(&tracked_end, memory_order_relaxed);
            while (end <= descriptor
                   && !atomic_compare_exchange_weak_explicit(&tracked_end, &end, descriptor + 1, memory_order_release, memory_order_relaxed)) {}
        }
    }
    return descriptor;
}

void shieldbus_wall_timers_clock_moved(void) {
    int end = atomic_load_explicit(&tracked_end, memory_order_acquire);
    for (int descriptor = 0; descriptor < end; descriptor++) {
        if (!atomic_load_explicit(&real_time_timers[descriptor], memory_order_relaxed)) continue;
        struct itimerspec current;
        if (timerfd_gettime(descriptor, &current) != 0) {
            // Closed, and its number not a timer now.
            atomic_store_explicit(&real_time_timers[descriptor], 0, memory_order_relaxed);
            continue;
        }
        if (current.it_value.tv_sec == 0 && current.it_value.tv_nsec == 0) continue;  // not armed
        // Due in a nanosecond: Dispatch wakes, runs what the device clock has reached and arms for the rest.
        struct itimerspec nudge = {.it_interval = current.it_interval, .it_value = {.tv_sec = 0, .tv_nsec = 1}};
        library_timerfd_settime()(descriptor, 0, &nudge, NULL);
    }
}

int timerfd_settime(int descriptor, int flags, const struct itimerspec *setting, struct itimerspec *previous) {
    struct itimerspec moved;
    if ((flags & TFD_TIMER_ABSTIME) && setting != NULL && descriptor >= 0 && descriptor < TRACKED_TIMERS
        && atomic_load_explicit(&real_time_timers[descriptor], memory_order_relaxed)
        && (setting->it_value.tv_sec != 0 || setting->it_value.tv_nsec != 0)) {  // zero disarms
        moved = *setting;
        struct timespec deadline;
        moved.it_value = *host_deadline(&setting->it_value, WHEN_THE_DEVICE_CLOCK_REACHES_IT, &deadline);
        if (moved.it_value.tv_sec == 0 && moved.it_value.tv_nsec == 0) moved.it_value.tv_nsec = 1;  // past: due, not disarmed
        setting = &moved;
    }
    return library_timerfd_settime()(descriptor, flags, setting, previous);
}
