// CLaunchTemplate: a plugin process that serves as its own launch template (a zygote), linked into every SDK plugin.
#ifndef SHIELDBUS_LAUNCH_TEMPLATE_H
#define SHIELDBUS_LAUNCH_TEMPLATE_H

/// The environment variable naming the descriptor of the broker's launch channel (a Unix SOCK_SEQPACKET socket).
/// Set only for a template process; a launched child never has it.
#define SHIELDBUS_LAUNCH_CHANNEL_VARIABLE "SHIELDBUS_LAUNCH_CHANNEL"

/// What a template says first: the broker finds this text in a plugin's executable to know it can serve as one.
#define SHIELDBUS_LAUNCH_TEMPLATE_MARKER "shieldbus-launch-template/1"

/// Whether this process was launched from a template (then `getppid()` is the template, not the sandbox's nobody).
int shieldbus_launched_from_template(void);

#endif
