// CZeroMQWithoutGSSAPI declares nothing: libzmq.a reaches its functions by their GSSAPI names, and no other code may.
#ifndef SHIELDBUS_WITHOUT_GSSAPI_H
#define SHIELDBUS_WITHOUT_GSSAPI_H
#endif
