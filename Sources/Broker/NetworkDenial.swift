// NetworkDenial: the seccomp program that keeps a sandboxed plugin off the network, as iOS keeps some extensions.

/// A classic BPF program for seccomp (what `seccomp_export_bpf` would write, and bwrap's `--seccomp` reads): every
/// system call is allowed but `socket` of any family other than `AF_UNIX` (refused with `EACCES`, as a denied
/// permission) and `io_uring_setup` (`ENOSYS`: io_uring can open sockets without `socket`); on x86-64, calls of the
/// x32 ABI are refused too. It is written by hand because it is this small; nil where the system call numbers are
/// not known here, and the sandbox then says so rather than pretend.
enum NetworkDenial {
    private struct Instruction {
        let code: UInt16, jumpIfTrue: UInt8, jumpIfFalse: UInt8, value: UInt32
    }

    private static let load: UInt16 = 0x20       // BPF_LD | BPF_W | BPF_ABS
    private static let jumpEqual: UInt16 = 0x15  // BPF_JMP | BPF_JEQ | BPF_K
    private static let jumpAtLeast: UInt16 = 0x35  // BPF_JMP | BPF_JGE | BPF_K
    private static let `return`: UInt16 = 0x06   // BPF_RET | BPF_K
    private static let allow: UInt32 = 0x7fff_0000
    private static func refuse(_ errno: UInt32) -> UInt32 { 0x0005_0000 | errno }  // SECCOMP_RET_ERRNO

    #if arch(x86_64)
    private static let architecture: UInt32 = 0xC000_003E  // AUDIT_ARCH_X86_64
    private static let socketCall: UInt32 = 41
    private static let firstX32Call: UInt32 = 0x4000_0000
    #elseif arch(arm64)
    private static let architecture: UInt32 = 0xC000_00B7  // AUDIT_ARCH_AARCH64
    private static let socketCall: UInt32 = 198
    private static let firstX32Call: UInt32 = 0xFFFF_FFFF  // no such ABI: nothing is that large
    #else
    private static let architecture: UInt32 = 0
    private static let socketCall: UInt32 = 0
    private static let firstX32Call: UInt32 = 0
    #endif
    private static let ioUringSetupCall: UInt32 = 425
    private static let unixFamily: UInt32 = 1  // AF_UNIX

    /// The program's bytes (`struct sock_filter` after `struct sock_filter`, in the machine's byte order).
    static let program: [UInt8]? = {
        guard architecture != 0 else { return nil }
        let instructions = [
            Instruction(code: load, jumpIfTrue: 0, jumpIfFalse: 0, value: 4),  // seccomp_data.arch
            Instruction(code: jumpEqual, jumpIfTrue: 1, jumpIfFalse: 0, value: architecture),
            Instruction(code: `return`, jumpIfTrue: 0, jumpIfFalse: 0, value: allow),  // another ABI: the kernel's own rules
            Instruction(code: load, jumpIfTrue: 0, jumpIfFalse: 0, value: 0),  // seccomp_data.nr
            Instruction(code: jumpAtLeast, jumpIfTrue: 5, jumpIfFalse: 0, value: firstX32Call),  // → refuse (EACCES)
            Instruction(code: jumpEqual, jumpIfTrue: 5, jumpIfFalse: 0, value: ioUringSetupCall),  // → refuse (ENOSYS)
            Instruction(code: jumpEqual, jumpIfTrue: 1, jumpIfFalse: 0, value: socketCall),  // → the family
            Instruction(code: `return`, jumpIfTrue: 0, jumpIfFalse: 0, value: allow),
            Instruction(code: load, jumpIfTrue: 0, jumpIfFalse: 0, value: 16),  // seccomp_data.args[0], low half
            Instruction(code: jumpEqual, jumpIfTrue: 2, jumpIfFalse: 0, value: unixFamily),  // → allow
            Instruction(code: `return`, jumpIfTrue: 0, jumpIfFalse: 0, value: refuse(13)),  // EACCES
            Instruction(code: `return`, jumpIfTrue: 0, jumpIfFalse: 0, value: refuse(38)),  // ENOSYS
            Instruction(code: `return`, jumpIfTrue: 0, jumpIfFalse: 0, value: allow),
        ]
        var bytes: [UInt8] = []
        for instruction in instructions {
            withUnsafeBytes(of: instruction.code) { bytes += $0 }
            bytes += [instruction.jumpIfTrue, instruction.jumpIfFalse]
            withUnsafeBytes(of: instruction.value) { bytes += $0 }
        }
        return bytes
    }()
}
