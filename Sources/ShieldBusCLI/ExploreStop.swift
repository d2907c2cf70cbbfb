import Explore
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// An explore stopped by SIGINT or SIGTERM ends cleanly: no new day starts, the days' `shieldbus run` processes are
/// stopped, and the explore's folder of days — in memory by default, where nothing else would ever remove it — is
/// removed; then the explore ends by the same signal. The handler only writes the signal's number on a pipe (what a
/// handler may do); a thread of its own does the rest.
enum ExploreStop {
    // Set before the handlers are installed, then only read, by the handlers (an Int32 read is async-signal-safe).
    nonisolated(unsafe) private static var writeDescriptor: Int32 = -1

    static func install(runner: DayRunner, folders: DayFolders) {
        var descriptors: [Int32] = [-1, -1]
        guard pipe(&descriptors) == 0 else { return }
        for descriptor in descriptors { _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC) }
        let readDescriptor = descriptors[0]
        writeDescriptor = descriptors[1]
        Thread.detachNewThread {
            var byte: UInt8 = 0
            // Interrupted reads are tried again; on any other failure the signals end the process at once again.
            while read(readDescriptor, &byte, 1) != 1 {
                guard errno == EINTR else {
                    for number in [SIGINT, SIGTERM] { signal(number, SIG_DFL) }
                    return
                }
            }
            let number = Int32(byte)
            printError("explore: stopped by \(number == SIGINT ? "SIGINT" : "SIGTERM"): ending the days in play and removing \(folders.path)")
            runner.stopPlaying(timeout: 10)
            folders.remove()
            signal(number, SIG_DFL)
            raise(number)
        }
        for number in [SIGINT, SIGTERM] {
            signal(number) { received in
                var byte = UInt8(truncatingIfNeeded: received)
                _ = write(ExploreStop.writeDescriptor, &byte, 1)  // async-signal-safe
                // A second one while the days stop ends the explore at once (its folder may stay).
                signal(received, SIG_DFL)
            }
        }
    }
}
