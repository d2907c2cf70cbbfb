// CZeroMQ: the libzmq C API, as Debian's libzmq3-dev installs it.
#ifndef SHIELDBUS_CZEROMQ_SHIM_H
#define SHIELDBUS_CZEROMQ_SHIM_H
#include <zmq.h>

/// What libzmq's own libraries set up once per process, at its first context: libsodium (`sodium_init`: its processor
/// feature probes, its random source checked, its guarded allocations' canary drawn) and OpenPGM (`pgm_init`: the
/// protocols database's `pgm`, the processor count, its clock; reference-counted, so a context's end leaves it set
/// up while one reference is held). Weak: a libzmq built without either has none, and nothing is made.
extern int sodium_init(void) __attribute__((weak));
extern _Bool pgm_init(void **error) __attribute__((weak));
static inline void shieldbus_zmq_libraries_set_up(void) {
    if (sodium_init) (void)sodium_init();
    if (pgm_init) (void)pgm_init((void **)0);
}

extern _Bool pgm_supported(void) __attribute__((weak));
/// Whether that set-up is made in this process, as OpenPGM tells it (libsodium cannot be asked without making its
/// own): 1 or 0, -1 for a libzmq without OpenPGM.
static inline int shieldbus_zmq_libraries_are_set_up(void) { return pgm_supported ? (pgm_supported() ? 1 : 0) : -1; }
#endif
