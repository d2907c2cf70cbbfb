// GroupStoresMaking: the App Groups' stores made on a thread of their own while the run's plan goes on beside it.
import AppGroupStore
import Configuration
import Foundation

/// Makes each configured App Group's store (`AppGroupContainer.createGroup`: the store made and flushed, its slices
/// declared in its first commit, its log copied in as its connection closes) on a thread of its own. Those flushes are
/// waits on the disk, not work: the device's store is made meanwhile, and the plugins, which open these stores, start
/// only after `finish`. Their folders are made before (`RunPlan.pluginSpecs`); nothing else touches them meanwhile.
final class GroupStoresMaking: @unchecked Sendable {
    private let done = DispatchSemaphore(value: 0)
    /// Written by the thread before it signals `done`, read only after `finish` waited for it.
    private var outcome: Result<[String], any Error> = .success([])
    /// Whether `finish` waited already (it is asked again on the way out of the plan).
    private var finished = false

    /// `onAThread` false: made here, before `init` returns — where the stores' folder is in memory, their flushes wait
    /// on no disk, and a thread would add its start and nothing to hide behind it.
    init(container: AppGroupContainer, groups: [ShieldBusConfiguration.AppGroupDeclaration], onAThread: Bool) {
        let groups = groups.map { ($0.name, $0.slices) }
        let make: @Sendable () -> Result<[String], any Error> = {
            Result { try groups.compactMap { try container.createGroup($0.0, slices: $0.1) } }
        }
        guard onAThread else {
            outcome = make()
            done.signal()
            return
        }
        Thread.detachNewThread { [self] in
            outcome = make()
            done.signal()
        }
    }

    /// Waits for the stores: what each store that lost commits to a restart says (`createGroup`'s result), in the
    /// configuration's order, or the first group's error. From the thread that made this, as often as asked.
    func finish() throws -> [String] {
        if !finished {
            done.wait()
            finished = true
        }
        return try outcome.get()
    }
}
