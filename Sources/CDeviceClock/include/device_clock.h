// The device's wall clock inside a plugin process: while set, the C library's real-time clock reads (and with them
// Foundation's `Date()`, `Date.now` and `CFAbsoluteTimeGetCurrent`) return bus time instead of the host's.
#ifndef SHIELDBUS_DEVICE_CLOCK_H
#define SHIELDBUS_DEVICE_CLOCK_H
#include <stdint.h>

/// Sets the device clock to `nanoseconds` since 1970 now, running on at `rate` device seconds per host second
/// (0 holds it still: virtual time; 1: real time; N: scaled time).
void shieldbus_device_clock_set(int64_t nanoseconds, double rate);

/// Gives the real-time clock back to the host.
void shieldbus_device_clock_clear(void);

/// Whether the device clock is set.
int shieldbus_device_clock_is_set(void);

/// Sets the calling thread's own device clock, which its reads prefer to the process's: each of several plugins
/// hosted on threads of one test process reads its own bus time. Other threads are not affected.
void shieldbus_device_clock_set_thread(int64_t nanoseconds, double rate);

/// Gives the calling thread's real-time clock back to the process's.
void shieldbus_device_clock_clear_thread(void);

/// Whether the calling thread's own device clock is set.
int shieldbus_device_clock_thread_is_set(void);

#endif
