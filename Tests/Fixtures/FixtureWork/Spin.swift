// FixtureWork: what the test fixtures share to play a plugin slow at its work — CPU used, whatever the machine's load.

import Foundation

/// Uses `cpuMilliseconds` of this thread's CPU time, however long the machine takes to give it.
public func spin(cpuMilliseconds: Int64) {
    func used() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now)
        return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
    }
    let end = used() + cpuMilliseconds
    var sink = 0
    while used() < end { for i in 0..<10_000 { sink &+= i } }
    if sink == 42 { print(sink) }
}
