import Broker
import BusProtocol
import DeviceAPI

/// A tool's input (`shieldbus do`) is answered once the plugins have handled what it caused, and with a failure
/// if one of them reported that it could not record it (`state.write-failed`) or the device did nothing with it (a
/// press with no shield up, a tap with no notification) — never "done" for a habit the app failed to save. A success
/// carries what is on screen after it, so the tool can say whether a shield came up.
final class InputConfirmations {
    /// How long a tool's input waits for the plugins (wall time): less than the tool's own 5 s, so the tool hears
    /// an answer even when a plugin is slow; it is then told the input was not yet handled.
    static let waitMilliseconds: Int64 = 3_000

    /// The failure's code when a plugin the input was for acts on nothing (given up on, or stopped).
    static let couldNotAct = "plugins-could-not-act"

    private struct Waiting {
        let request: Envelope
        var failures: [String] = []
        /// Why the input did nothing (the first reason), if it did nothing.
        var refusal: DeviceError?
        var timer: UInt64 = 0
    }

    private unowned let host: any DeviceHost
    /// What is on screen now, told to a tool with its answer.
    private let look: () -> DeviceLook
    /// By the request's sequence number.
    private var waiting: [UInt64: Waiting] = [:]
    /// The input whose action runs now (actions run synchronously): the one a refusal is about.
    private var performing: UInt64?

    init(host: any DeviceHost, look: @escaping () -> DeviceLook) {
        self.host = host
        self.look = look
    }

    /// Performs the input `request` asks for and answers it once the bus is quiet (everything it caused is
    /// handled), or after `waitMilliseconds`. A failure to record while performing it (the device's own store)
    /// counts as much as one a plugin reports later.
    func perform(_ request: Envelope, _ action: () -> Void) {
        let seq = request.seq
        waiting[seq] = Waiting(request: request)
        performing = seq
        action()
        performing = nil
        if let refusal = waiting[seq]?.refusal {
            waiting[seq] = nil
            return host.reply(to: request, DeviceReply<NoValue>.failure(refusal))
        }
        waiting[seq]?.timer = host.bus.afterWallTime(milliseconds: Self.waitMilliseconds) { [weak self] in self?.answer(seq, handled: false) }
        host.bus.whenQuiet { [weak self] in self?.answer(seq, handled: true) }
    }

    /// The input being performed did nothing on the device: its tool is told why instead of "done". Outside a
    /// tool's input (a scenario's step) nothing is waiting and this does nothing.
    /// Returns whether a tool's input is being performed (and so was told).
    @discardableResult
    func refuse(_ error: DeviceError) -> Bool {
        guard let seq = performing, waiting[seq] != nil else { return false }
        if waiting[seq]?.refusal == nil { waiting[seq]?.refusal = error }
        return true
    }

    /// A plugin could not record what an event asked for: counted and said on the terminal (`storage-failed`),
    /// and held against every input still waiting. Only a supervised plugin is believed.
    func writeFailed(_ envelope: Envelope) {
        let body = envelope.bodyValue
        guard host.bus.isSupervisedPlugin(envelope.source) else { return }
        let what = TerminalText.escaped(body["what"]?.stringValue ?? "its change")
        let message = TerminalText.escaped(body["message"]?.stringValue ?? "no reason given")
        let failure = "\(envelope.source) could not record \(what): \(message)"
        host.bus.reportStorageFailure(failure)
        noteFailure(failure)
    }

    /// Something could not be recorded (by a plugin, or the device's own state): every input still waiting is
    /// answered with it.
    func noteFailure(_ failure: String) {
        for seq in waiting.keys { waiting[seq]!.failures.append(failure) }
    }

    private func answer(_ seq: UInt64, handled: Bool) {
        guard let entry = waiting.removeValue(forKey: seq) else { return }
        host.bus.cancelWallTimer(entry.timer)
        // A plugin given up on (or stopped) that the input's events were for: whatever it would have done was not done.
        let outOfAction = host.bus.pluginsThatCouldNotAct(since: seq).map { PluginOutOfAction(name: $0.name, why: $0.why) }
        if !outOfAction.isEmpty {
            let names = outOfAction.map(\.name).joined(separator: ", ")
            let message = "nothing acted for \(names): " + outOfAction.map { "\($0.name) \($0.why)" }.joined(separator: "; ")
                + (entry.failures.isEmpty ? "" : "; " + entry.failures.joined(separator: "; "))
                + "; fix it and start it again with `shieldbus plugin restart NAME` (or restart the device)"
            host.reply(to: entry.request, DeviceReply<NoValue>.failure(DeviceError(code: Self.couldNotAct, message: message, plugins: outOfAction)))
        } else if entry.failures.isEmpty {
            host.reply(to: entry.request, bodyJSON: InputOutcome(handled: handled, screen: look()).successReplyJSON)
        } else {
            host.reply(to: entry.request, DeviceReply<NoValue>.failure(DeviceError(code: "not-recorded", message: entry.failures.joined(separator: "; "))))
        }
    }
}
