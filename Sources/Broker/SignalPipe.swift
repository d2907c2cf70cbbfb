import Foundation

/// Turns SIGINT, SIGTERM and SIGCHLD into bytes on a pipe that the broker's poll loop watches,
/// so signals are handled in the loop rather than in a signal handler.
final class SignalPipe {
    // Set before the handlers are installed, then only read, by the handlers (an Int32 read is async-signal-safe).
    nonisolated(unsafe) private static var writeDescriptor: Int32 = -1
    let readDescriptor: Int32

    init() {
        var fds: [Int32] = [-1, -1]
        precondition(pipe(&fds) == 0, "pipe() failed")
        for fd in fds {
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        }
        readDescriptor = fds[0]
        SignalPipe.writeDescriptor = fds[1]
        for signalNumber in [SIGINT, SIGTERM, SIGCHLD] {
            signal(signalNumber) { number in
                var byte = UInt8(truncatingIfNeeded: number)
                _ = write(SignalPipe.writeDescriptor, &byte, 1)  // async-signal-safe
            }
        }
        signal(SIGPIPE, SIG_IGN)
    }

    /// The signals that arrived since the last call.
    func drain() -> [Int32] {
        var buffer = [UInt8](repeating: 0, count: 64)
        var signals: [Int32] = []
        while true {
            let count = read(readDescriptor, &buffer, buffer.count)
            if count <= 0 { return signals }
            signals.append(contentsOf: buffer[0..<count].map(Int32.init))
        }
    }

    /// Restores default handling and closes the pipe (for a broker that stopped and runs no more).
    func restore() {
        for signalNumber in [SIGINT, SIGTERM, SIGCHLD] { signal(signalNumber, SIG_DFL) }
        close(readDescriptor)
        close(SignalPipe.writeDescriptor)
        SignalPipe.writeDescriptor = -1
    }
}
