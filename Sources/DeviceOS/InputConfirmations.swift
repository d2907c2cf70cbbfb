import Broker
import BusProtocol
import DeviceAPI

/// A tool's input (`shieldbus do`) is answered once the plugins have handled what it caused, and with a failure
/// if one of them reported that it could not record it (`state.write-failed`) — never "done" for a habit the
/// app failed to save.
final class InputConfirmations {
    /// How long a tool's input waits for the plugins (wall time): less than the tool's own 5 s, so the tool hears
    /// an answer even when a plugin is slow; it is then told the input was not yet handled.
    static let waitMilliseconds: Int64 = 3_000

    private struct Waiting {
        let request: Envelope
        var failures: [String] = []
        var timer: UInt64 = 0
    }

    private unowned let device: DeviceOS
    /// By the request's sequence number.
    private var waiting: [UInt64: Waiting] = [:]

    init(device: DeviceOS) {
        self.device = device
    }

    /// Performs the input `request` asks for and answers it once the bus is quiet (everything it caused is
    /// handled), or after `waitMilliseconds`. A failure to record while performing it (the device's own store)
    /// counts as much as one a plugin reports later.
    func perform(_ request: Envelope, _ action: () -> Void) {
        let seq = request.seq
        waiting[seq] = Waiting(request: request)
        action()
        waiting[seq]?.timer = device.bus.afterWallTime(milliseconds: Self.waitMilliseconds) { [weak self] in self?.answer(seq, handled: false) }
        device.bus.whenQuiet { [weak self] in self?.answer(seq, handled: true) }
    }

    /// A plugin could not record what an event asked for: counted and said on the terminal (`storage-failed`),
    /// and held against every input still waiting. Only a supervised plugin is believed.
    func writeFailed(_ envelope: Envelope) {
        let body = envelope.bodyValue
        guard device.bus.isSupervisedPlugin(envelope.source) else { return }
        let what = TerminalText.escaped(body["what"]?.stringValue ?? "its change")
        let message = TerminalText.escaped(body["message"]?.stringValue ?? "no reason given")
        let failure = "\(envelope.source) could not record \(what): \(message)"
        device.bus.reportStorageFailure(failure)
        noteFailure(failure)
    }

    /// Something could not be recorded (by a plugin, or the device's own state): every input still waiting is
    /// answered with it.
    func noteFailure(_ failure: String) {
        for seq in waiting.keys { waiting[seq]!.failures.append(failure) }
    }

    private func answer(_ seq: UInt64, handled: Bool) {
        guard let entry = waiting.removeValue(forKey: seq) else { return }
        device.bus.cancelWallTimer(entry.timer)
        if entry.failures.isEmpty {
            device.reply(to: entry.request, .success(InputOutcome(handled: handled)))
        } else {
            device.reply(to: entry.request, DeviceReply<NoValue>.failure(DeviceError(code: "not-recorded", message: entry.failures.joined(separator: "; "))))
        }
    }
}
