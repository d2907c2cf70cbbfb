#include "process_control.h"
#include <sys/prctl.h>

int shieldbus_die_with_parent(int signal) {
    return prctl(PR_SET_PDEATHSIG, signal, 0, 0, 0);
}
