// CProcessControl: the one Linux call Swift's Glibc module does not expose — dying with one's parent.
#ifndef SHIELDBUS_PROCESS_CONTROL_H
#define SHIELDBUS_PROCESS_CONTROL_H

/// Asks the kernel to send `signal` to this process when its parent dies (prctl PR_SET_PDEATHSIG).
/// Returns 0 on success, -1 with errno set on failure.
int shieldbus_die_with_parent(int signal);

#endif
