// CZeroMQ: the libzmq C API, as Debian's libzmq3-dev installs it.
#ifndef SHIELDBUS_CZEROMQ_SHIM_H
#define SHIELDBUS_CZEROMQ_SHIM_H
#include <zmq.h>
#endif
