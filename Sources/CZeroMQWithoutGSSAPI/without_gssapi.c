// CZeroMQWithoutGSSAPI: the GSSAPI functions and name types Debian's libzmq.a refers to, each refusing loudly, so that
// release programs need no Kerberos libraries (libgssapi_krb5 and the six it loads, at every start and in every fork).
//
// libzmq calls these only from its GSSAPI mechanism, which it makes only for a socket given a ZMQ_GSSAPI_* option:
// ShieldBus's sockets never are. A peer cannot bring the mechanism in: libzmq compares the mechanism a peer's greeting
// names with its socket's own, and a mismatch closes the connection before any mechanism is made (docs/security.md § 2).
// So reaching one of these is a programming error in this process, and it aborts, naming the function: returning
// GSS_S_FAILURE instead would leave a socket that silently never connects (libzmq reconnects and fails again), and a
// security mechanism that half works is worse than none.
//
// Hidden: libzmq.a's objects link to these inside the program, and no shared library can bind to them (a libcurl or
// libzmq.so loaded beside them keeps the real library's). Any other static archive a release program links that calls
// GSSAPI would bind to these too, and abort where it would have worked: libzmq's is the only one (`nm -u` of the
// program's archives). A debug build links the shared libzmq, which loads the real GSSAPI library itself; there these
// are unused.
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#pragma GCC visibility push(hidden)
#include <gssapi/gssapi.h>

static _Noreturn void refuse(const char *function) {
    static const char before[] = "shieldbus: libzmq called ";
    static const char after[] = ": this program is linked without the GSSAPI security mechanism (CZeroMQWithoutGSSAPI), "
                                "and no ShieldBus socket may set a ZMQ_GSSAPI_* option\n";
    // write(2), not stdio: nothing to lock or allocate on the way to the abort.
    (void)!write(STDERR_FILENO, before, sizeof before - 1);
    (void)!write(STDERR_FILENO, function, strlen(function));
    (void)!write(STDERR_FILENO, after, sizeof after - 1);
    abort();
}

gss_OID GSS_C_NT_USER_NAME = GSS_C_NO_OID;
gss_OID GSS_C_NT_HOSTBASED_SERVICE = GSS_C_NO_OID;

OM_uint32 gss_acquire_cred(OM_uint32 *minor, gss_name_t name, OM_uint32 time, gss_OID_set mechanisms, gss_cred_usage_t usage,
                           gss_cred_id_t *credential, gss_OID_set *actual, OM_uint32 *timeLeft) {
    refuse(__func__);
}

OM_uint32 gss_release_cred(OM_uint32 *minor, gss_cred_id_t *credential) { refuse(__func__); }

OM_uint32 gss_init_sec_context(OM_uint32 *minor, gss_cred_id_t credential, gss_ctx_id_t *context, gss_name_t target, gss_OID mechanism,
                               OM_uint32 flags, OM_uint32 time, gss_channel_bindings_t bindings, gss_buffer_t input, gss_OID *actual,
                               gss_buffer_t output, OM_uint32 *returnedFlags, OM_uint32 *timeLeft) {
    refuse(__func__);
}

OM_uint32 gss_accept_sec_context(OM_uint32 *minor, gss_ctx_id_t *context, gss_cred_id_t credential, gss_buffer_t input,
                                 gss_channel_bindings_t bindings, gss_name_t *source, gss_OID *mechanism, gss_buffer_t output,
                                 OM_uint32 *returnedFlags, OM_uint32 *timeLeft, gss_cred_id_t *delegated) {
    refuse(__func__);
}

OM_uint32 gss_delete_sec_context(OM_uint32 *minor, gss_ctx_id_t *context, gss_buffer_t output) { refuse(__func__); }

OM_uint32 gss_import_name(OM_uint32 *minor, gss_buffer_t input, gss_OID type, gss_name_t *output) { refuse(__func__); }

OM_uint32 gss_display_name(OM_uint32 *minor, gss_name_t name, gss_buffer_t output, gss_OID *type) { refuse(__func__); }

OM_uint32 gss_release_name(OM_uint32 *minor, gss_name_t *name) { refuse(__func__); }

OM_uint32 gss_release_buffer(OM_uint32 *minor, gss_buffer_t buffer) { refuse(__func__); }

OM_uint32 gss_wrap(OM_uint32 *minor, gss_ctx_id_t context, int confidential, gss_qop_t quality, gss_buffer_t input, int *confidentialState,
                   gss_buffer_t output) {
    refuse(__func__);
}

OM_uint32 gss_unwrap(OM_uint32 *minor, gss_ctx_id_t context, gss_buffer_t input, gss_buffer_t output, int *confidentialState,
                     gss_qop_t *quality) {
    refuse(__func__);
}
#pragma GCC visibility pop
