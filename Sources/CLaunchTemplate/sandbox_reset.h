// The reset of a launch template kept across explored days (launch_template.c's "reset"): what one day's launches left
// in the sandbox is gone before the next day's first launch.
#ifndef SHIELDBUS_SANDBOX_RESET_H
#define SHIELDBUS_SANDBOX_RESET_H

/// Notes what the sandbox's own memory (its root, /dev and /tmp, each a tmpfs of its own) holds before any launch.
/// Returns 0, or an errno.
int shieldbus_sandbox_note_start(void);

/// Kills every process of the sandbox but the caller (its pid namespace's first), reaps them, removes what was made in
/// the sandbox's own memory since `shieldbus_sandbox_note_start`, and every System V object of its ipc namespace.
/// `ended` is told each reaped pid (a launch's end is then not told as one). Returns 0, or an errno when the sandbox
/// could not be brought back as it started (an entry noted at start is missing or replaced).
int shieldbus_sandbox_reset(void (*ended)(int pid));

#endif
