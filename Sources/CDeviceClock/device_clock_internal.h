// What the device clock's C files share, and nothing else sees.
#ifndef SHIELDBUS_DEVICE_CLOCK_INTERNAL_H
#define SHIELDBUS_DEVICE_CLOCK_INTERNAL_H
#include <stdint.h>
#include <time.h>

/// The device clock now, in nanoseconds since 1970 (the calling thread's own first), and the device seconds it runs
/// per host second (`rate`, when not NULL: 0 while it holds still); 0 when it is not set.
int shieldbus_device_nanoseconds(int64_t *result, double *rate);

/// The host's clock `id`, past the device clock: the C library's own reading.
int shieldbus_host_gettime(clockid_t id, struct timespec *time);

/// Wakes every armed wall-clock timer (a real-time timerfd): the device clock moved, and what it now reaches is due.
void shieldbus_wall_timers_clock_moved(void);

#endif
