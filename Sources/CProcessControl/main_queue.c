// Whether the main queue has work waiting, asked of the descriptor libdispatch signals its run loop through; whether a
// thread's run loop was made, asked of CoreFoundation without making it.
#include "process_control.h"
#include <poll.h>
#include <pthread.h>

// libdispatch's handle for CoreFoundation's run loop (an eventfd on Linux): written when work is queued on the main
// queue, read by the run loop's turn that drains it. Exported by libdispatch, declared in its private header only.
extern int _dispatch_get_main_queue_handle_4CF(void);

int shieldbus_main_queue_is_signalled(void) {
    struct pollfd handle = {.fd = _dispatch_get_main_queue_handle_4CF(), .events = POLLIN};
    int ready = poll(&handle, 1, 0);
    return ready != 0;  // an error (-1) counts as signalled: the caller then turns the run loop, as it would have
}

// CoreFoundation's run loop of a thread if it was made, NULL if not (it makes none): exported by CoreFoundation for
// Foundation, declared in no public header. Weak, so that a program without CoreFoundation links; there it is taken as
// made, and the caller turns the loop as it would have.
extern void *_CFRunLoopGet0b(pthread_t thread) __attribute__((weak));

int shieldbus_run_loop_exists(void) {
    if (!_CFRunLoopGet0b) return 1;
    return _CFRunLoopGet0b(pthread_self()) != NULL;
}
