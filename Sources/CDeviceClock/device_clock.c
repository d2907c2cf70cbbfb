// The device clock: this program's own definitions of the C library's real-time clock calls. An executable's
// definition wins over the C library's for every caller in the process (Foundation's included), so a plugin reads
// bus time with no preloaded library and no per-call parsing: the SDK sets it as each event is handled.
// Until it is set (the broker, the tools, a test process) every call goes to the C library unchanged. Monotonic
// clocks always stay the host's: timeouts, polls and libzmq's timers measure real time.
#define _GNU_SOURCE
#include "device_clock.h"
#include "device_clock_internal.h"
#include <dlfcn.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

typedef int (*clock_gettime_function)(clockid_t, struct timespec *);

/// A seqlock: the SDK's thread writes, any thread reads (a logger's, a Task's) and never sees a torn setting. The
/// fields are atomics read and written relaxed, ordered by the fences around them (Boehm's seqlock recipe).
static _Atomic uint64_t generation = 0;
static _Atomic int is_set = 0;
static _Atomic int64_t base_nanoseconds = 0;
static _Atomic int64_t base_monotonic = 0;
static _Atomic double base_rate = 0;

static clock_gettime_function host_clock_gettime(void) {
    static _Atomic(clock_gettime_function) found = NULL;
    clock_gettime_function function = atomic_load_explicit(&found, memory_order_acquire);
    if (function == NULL) {
        function = (clock_gettime_function)dlsym(RTLD_NEXT, "clock_gettime");
        atomic_store_explicit(&found, function, memory_order_release);
    }
    return function;
}

int shieldbus_host_gettime(clockid_t id, struct timespec *time) {
    clock_gettime_function function = host_clock_gettime();
    if (function != NULL) return function(id, time);
    return (int)syscall(SYS_clock_gettime, id, time);
}

static int64_t monotonic_nanoseconds(void) {
    struct timespec now;
    shieldbus_host_gettime(CLOCK_MONOTONIC, &now);
    return (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
}

void shieldbus_device_clock_set(int64_t nanoseconds, double rate) {
    int64_t monotonic = monotonic_nanoseconds();
    atomic_fetch_add_explicit(&generation, 1, memory_order_relaxed);  // odd: being written
    atomic_thread_fence(memory_order_release);
    atomic_store_explicit(&base_nanoseconds, nanoseconds, memory_order_relaxed);
    atomic_store_explicit(&base_monotonic, monotonic, memory_order_relaxed);
    atomic_store_explicit(&base_rate, rate, memory_order_relaxed);
    atomic_fetch_add_explicit(&generation, 1, memory_order_release);  // even: consistent
    atomic_store_explicit(&is_set, 1, memory_order_release);
    shieldbus_wall_timers_clock_moved();
}

void shieldbus_device_clock_clear(void) { atomic_store_explicit(&is_set, 0, memory_order_release); }

int shieldbus_device_clock_is_set(void) { return atomic_load_explicit(&is_set, memory_order_acquire); }

/// A thread's own device clock (a plugin hosted on a thread of a test's process): only its thread reads or writes it.
static _Thread_local int thread_is_set = 0;
static _Thread_local int64_t thread_base_nanoseconds = 0;
static _Thread_local int64_t thread_base_monotonic = 0;
static _Thread_local double thread_base_rate = 0;

void shieldbus_device_clock_set_thread(int64_t nanoseconds, double rate) {
    thread_base_nanoseconds = nanoseconds;
    thread_base_monotonic = monotonic_nanoseconds();
    thread_base_rate = rate;
    thread_is_set = 1;
}

void shieldbus_device_clock_clear_thread(void) { thread_is_set = 0; }

int shieldbus_device_clock_thread_is_set(void) { return thread_is_set; }

int shieldbus_device_nanoseconds(int64_t *result, double *rate_result) {
    if (thread_is_set) {
        int64_t nanoseconds = thread_base_nanoseconds;
        if (thread_base_rate != 0) nanoseconds += (int64_t)((double)(monotonic_nanoseconds() - thread_base_monotonic) * thread_base_rate);
        *result = nanoseconds;
        if (rate_result != NULL) *rate_result = thread_base_rate;
        return 1;
    }
    if (!atomic_load_explicit(&is_set, memory_order_acquire)) return 0;
    for (;;) {
        uint64_t before = atomic_load_explicit(&generation, memory_order_acquire);
        if (before & 1) continue;
        int64_t nanoseconds = atomic_load_explicit(&base_nanoseconds, memory_order_relaxed);
        int64_t monotonic = atomic_load_explicit(&base_monotonic, memory_order_relaxed);
        double rate = atomic_load_explicit(&base_rate, memory_order_relaxed);
        atomic_thread_fence(memory_order_acquire);
        if (atomic_load_explicit(&generation, memory_order_relaxed) != before) continue;
        if (rate != 0) nanoseconds += (int64_t)((double)(monotonic_nanoseconds() - monotonic) * rate);
        *result = nanoseconds;
        if (rate_result != NULL) *rate_result = rate;
        return 1;
    }
}

/// Whether `pointer` is not NULL, asked so that the compiler keeps the question: the C library declares these
/// arguments never NULL, and an optimized build would drop a plain comparison (a caller passing NULL would crash here).
static int is_given(const void *pointer) {
    const void *volatile seen = pointer;
    return seen != NULL;
}

int clock_gettime(clockid_t id, struct timespec *time) {
    int64_t nanoseconds;
    if ((id == CLOCK_REALTIME || id == CLOCK_REALTIME_COARSE) && is_given(time) && shieldbus_device_nanoseconds(&nanoseconds, NULL)) {
        // Floor division: an instant before 1970 keeps tv_nsec in 0..<1e9, as the C library gives it.
        int64_t seconds = nanoseconds / 1000000000, rest = nanoseconds % 1000000000;
        if (rest < 0) { seconds -= 1; rest += 1000000000; }
        time->tv_sec = (time_t)seconds;
        time->tv_nsec = (long)rest;
        return 0;
    }
    return shieldbus_host_gettime(id, time);
}

int gettimeofday(struct timeval *restrict time, void *restrict zone) {
    (void)zone;  // obsolete: always ignored
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    if (is_given(time)) {
        time->tv_sec = now.tv_sec;
        time->tv_usec = now.tv_nsec / 1000;
    }
    return 0;
}

time_t time(time_t *result) {
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    if (result != NULL) *result = now.tv_sec;
    return now.tv_sec;
}
