// CrashPoints: for fault tests, the broker's own death, as a SIGKILL, on either side of a chosen batch's save.

import Foundation
import Logging

/// `shieldbus run --crash-before-saving TOPIC` (or `--crash-after-saving`) with `--crash-occurrence N`: the broker
/// kills itself around the save of the Nth batch holding an event on TOPIC, with nothing cleaned up, so a fault test
/// can resume it from exactly that state.
final class CrashPoints {
    private let point: CrashPoint?
    private let occurrence: Int
    private let logger: Logger
    /// Whether the batch being sequenced holds an event on the crash topic.
    private var armed = false
    /// How many batches held an event on the crash topic so far.
    private var batchesOnTopic = 0
    /// The chosen batch is sequenced and its save (the first that covers it) not yet made.
    private var due = false

    /// A fault test's run saves each batch on its own: which batches a shared save covers depends on how the loop's
    /// passes fell, and the cut at the chosen batch must be the same in every run of the test.
    var savesEachBatch: Bool { point != nil }

    init(point: CrashPoint?, occurrence: Int, logger: Logger) {
        (self.point, self.occurrence, self.logger) = (point, occurrence, logger)
    }

    /// An event on `topic` joins the batch being sequenced (or is held for a later one).
    func arm(_ topic: String) {
        if point?.topic == topic { armed = true }
    }

    /// The batch being sequenced is complete. Counted here, not at the save: one save may cover several batches
    /// (`Broker.saveSequenced`), and the occurrence a fault test picks counts batches.
    func batchSequenced() {
        guard armed else { return }
        armed = false
        batchesOnTopic += 1
        if batchesOnTopic == occurrence { due = true }
    }

    /// Dies here if the save being made covers the chosen batch and this is the chosen side of it (`before`: the
    /// journal is written, the save not made).
    func crashIfDue(before: Bool) {
        guard due, let point else { return }
        if !before { due = false }
        guard (point == .beforeSaving(topic: point.topic)) == before else { return }
        logger.notice("killing the broker \(before ? "before" : "after") saving batch \(occurrence) with \(point.topic), as the fault test asks")
        kill(getpid(), SIGKILL)
    }
}
