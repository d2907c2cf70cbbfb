// CLaunchTemplate: a plugin process that serves as its own launch template (a zygote), linked into every SDK plugin.
#ifndef SHIELDBUS_LAUNCH_TEMPLATE_H
#define SHIELDBUS_LAUNCH_TEMPLATE_H

/// The environment variable naming the descriptor of the broker's launch channel (a Unix SOCK_SEQPACKET socket).
/// Set only for a template process; a launched child never has it.
#define SHIELDBUS_LAUNCH_CHANNEL_VARIABLE "SHIELDBUS_LAUNCH_CHANNEL"

/// What a template says first (after "ready "); it is kept in the executable's ELF section `shieldbus_launch_template`,
/// by which the broker knows a plugin's program can serve as a template.
#define SHIELDBUS_LAUNCH_TEMPLATE_MARKER "shieldbus-launch-template/1"

/// Whether this process was launched from a template (then `getppid()` is the template, not the sandbox's nobody).
int shieldbus_launched_from_template(void);

/// Ends this process with `status`. A launch from a template (a process about to vanish) flushes C stdio's buffers and
/// ends at once, skipping the exit handlers and the libraries' destructors: they only free and unregister, each write
/// faulting in a copy of a page shared with the template; a learning launch tells its mapped pages first. Any other
/// process ends through exit().
__attribute__((noreturn)) void shieldbus_end_process(int status);

#endif
