// Recorder: the journal and the delivery store — opened, written per batch, and their failures reported once per episode.

import BusClient
import BusProtocol
import Logging

/// Every batch is journaled, then saved in `bus.sqlite`, then sent: what a plugin is given is saved first, so a broker
/// killed at any point redelivers it, and a journal line the save did not cover is cut off when the journal is resumed.
/// A write that fails (disk full, read-only) is reported once, keeps its data in memory and is retried.
final class Recorder {
    private let ledger: DeliveryLedger
    private let outbox: Outbox
    private let statistics: BusStatistics
    private let clock: BusClock
    private let logger: Logger
    private var journal: Journal?
    /// The last failure to save the delivery ledger, while it lasts.
    private var storageFailure: String?
    /// Numbering stopped for want of a reservation (said once, until one is written).
    private(set) var numberingStopped = false
    private var journalFailing = false
    /// The last failure to write any of the broker's or the device's state (`status`).
    private(set) var lastStorageError: String?
    /// Storage failures met before `bus.started` was out (the services' stores open first), said right after it;
    /// nil from then on.
    private var failuresBeforeStart: [String]? = []

    init(ledger: DeliveryLedger, outbox: Outbox, statistics: BusStatistics, clock: BusClock, logger: Logger) {
        (self.ledger, self.outbox, self.statistics, self.clock, self.logger) = (ledger, outbox, statistics, clock, logger)
    }

    /// What the last broker left in the delivery store.
    struct Restored {
        var lastSeq: UInt64 = 0
        /// The last sequence number it saved: a resumed journal is cut back to it.
        var savedSeq: UInt64?
        var announced: [String: [UInt8]] = [:]
        /// Observers' publications held for a settled point it did not reach.
        var held: [PendingEvent] = []
        /// What it lost to the machine's restart (`CommitTally.restartLoss`), for the broker to say once it runs.
        var restartLoss: String?
    }

    /// Opens the state folder's delivery store, if the broker has one: numbering and (scaled) bus time go on from
    /// where the last broker stopped, and what it left unacknowledged waits for the configured plugins.
    func openDeliveryStore(path: String?, plugins configured: Set<String>, continuingTheRun: Bool) throws -> Restored {
        guard let path else { return Restored() }
        let store = try DeliveryStore(path: path, checkpointLimit: DeliveryStore.checkpointLimit(virtualTime: clock.isVirtual))
        store.onNoteFailure = { [weak self] in self?.reportStorageFailure("cannot note a commit of \($0)") }
        let snapshot = try store.load()
        ledger.attach(store)
        ledger.restore(snapshot.pending.filter { configured.contains($0.plugin) }, published: snapshot.published)
        if let time = snapshot.busTime { clock.resume(notBefore: time, continuingTheRun: continuingTheRun) }
        if !snapshot.pending.isEmpty {
            logger.notice("redelivering what plugins had not acknowledged when the last broker stopped",
                          metadata: ["events": "\(snapshot.pending.count)", "store": "\(path)"])
        }
        return Restored(lastSeq: snapshot.lastSeq, savedSeq: snapshot.savedSeq, announced: snapshot.announced,
                        held: snapshot.held.filter { configured.contains($0.source) }.map(PendingEvent.init(held:)), restartLoss: store.restartLoss)
    }

    /// Whether the delivery store owes a checkpoint (`DeliveryStore.checkpointIfOwed`).
    var deliveryStoreOwesCheckpoint: Bool { ledger.store?.owesCheckpoint ?? false }

    /// Runs the delivery store's checkpoint owed, if any: the loop is idle. A failure is said with the store's next
    /// commit (`onNoteFailure`).
    func checkpointDeliveryStore() { ledger.store?.checkpointIfOwed() }

    /// The run is ending: the delivery store's close work done now (`DeliveryStore.copyLogBeforeClose`).
    func copyDeliveryStoreLog() { ledger.store?.copyLogBeforeClose() }

    /// Opens the journal at `path`; appending, it is cut back to `savedSeq` and the clock goes on after what was cut.
    func openJournal(path: String?, appending: Bool, keepingThrough savedSeq: UInt64?) throws {
        guard let path else { return }
        journal = try Journal(path: path, appending: appending, keepingThrough: savedSeq)
        if let reached = journal?.cutOffReached { clock.resume(notBefore: reached, continuingTheRun: appending) }
    }

    var keepsJournal: Bool { journal != nil }

    /// The bytes of the journal that a resumed run kept of the previous runs' (0 for a fresh journal, or none).
    var journalKept: UInt64 { journal?.kept ?? 0 }

    /// Journals one sequenced envelope (buffered: written when the buffer fills, or at the batch's end).
    func journal(_ json: [UInt8]) {
        if journal?.append(json) == true { flushJournal() }
    }

    /// Writes the journal's buffer; a failure is reported once per episode, and the events stay buffered.
    func flushJournal() {
        do {
            try journal?.flush()
            journalFailing = false
        } catch {
            reportJournalFailure(error)
        }
    }

    func closeJournal() {
        do { try journal?.close() } catch { reportJournalFailure(error) }
        journal = nil
    }

    /// Writes the ledger's changes; a failure (disk full, read-only) is reported once and retried on the next
    /// save, so nothing is lost when space returns. `publicationsMayWait`: see `DeliveryLedger.save`.
    func saveLedger(lastSeq: UInt64, publicationsMayWait: Bool = false) {
        do {
            try ledger.save(lastSeq: lastSeq, everySequenced: journal != nil, busTime: clock.now(), timeAhead: clock.scaledMillisecondsPerWallSecond,
                            wallNow: monotonicMilliseconds(), publicationsMayWait: publicationsMayWait)
            if let failure = storageFailure {
                storageFailure = nil
                logger.notice("the delivery store is writable again", metadata: ["after": "\(failure)"])
            }
        } catch {
            let message = "cannot write the delivery store \(ledger.store?.path ?? ""): \(error); unacknowledged events stay in memory and are written when it can be"
            lastStorageError = message
            guard storageFailure == nil else { return }
            storageFailure = message
            reportStorageFailure(message)
        }
    }

    /// Makes sure the number after `lastSeq` is reserved in `bus.sqlite` before it is handed out; false (said once
    /// per episode) when the store cannot be written: the broker then numbers nothing until it can, since a number
    /// it gave without a reservation would be given again after a crash.
    func reserveNumber(after lastSeq: UInt64) -> Bool {
        guard !ledger.mayNumber(lastSeq + 1) else { return true }
        do {
            try ledger.reserveNumbers(after: lastSeq, busTime: clock.now(), timeAhead: clock.scaledMillisecondsPerWallSecond)
            if numberingStopped {
                numberingStopped = false
                logger.notice("numbering goes on: the delivery store is writable again", metadata: ["after": "\(lastSeq)"])
            }
            return true
        } catch {
            let message = "cannot write the delivery store \(ledger.store?.path ?? ""): \(error); numbering stopped after seq \(lastSeq) "
                + "until it can be written (a number not reserved there would be given again after a crash); what is published waits"
            lastStorageError = message
            // Said once per stop, whatever other write failed before it: it is news of its own (nothing is numbered).
            if !numberingStopped {
                numberingStopped = true
                reportStorageFailure(message)
            }
            return false
        }
    }

    /// `bus.started` is out: says what the state folder's stores lost to the machine's restart (a power cut), in the
    /// log and as `bus.error` `writes-lost`, one a store, then the storage failures met while starting.
    func busStarted(restartLosses losses: [String]) {
        for loss in losses {
            logger.warning("\(loss)")
            outbox.reportError("writes-lost", sender: "broker", message: loss, countedIn: statistics)
        }
        for message in failuresBeforeStart ?? [] {
            outbox.reportError("storage-failed", sender: "broker", message: message, countedIn: statistics)
        }
        failuresBeforeStart = nil
    }

    /// A write of the broker's or the device's state failed: said on the terminal, counted in `status`, and
    /// published as `bus.error` `storage-failed` — once `bus.started` is out, as a journal begins with it.
    func reportStorageFailure(_ message: String) {
        lastStorageError = message
        logger.error("\(message)")
        guard failuresBeforeStart == nil else { return failuresBeforeStart!.append(message) }
        outbox.reportError("storage-failed", sender: "broker", message: message, countedIn: statistics)
    }

    private func reportJournalFailure(_ error: Error) {
        guard !journalFailing else { return }
        journalFailing = true
        reportStorageFailure("cannot write the journal \(journal?.path ?? ""): \(error); its events are kept in memory and written when it can be")
    }
}
