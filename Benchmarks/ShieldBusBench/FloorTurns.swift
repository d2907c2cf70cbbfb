import Foundation
import SQLite
import ZeroMQ

/// CPU per turn in µs, both processes and every thread of each, and the sending process's main thread apart.
struct TurnCosts: Equatable {
    /// A bare hand-off and its acknowledgement.
    var roundTrip: Double
    var roundTripSender: Double
    /// The same with a `bus.sqlite`-like save before the hand-off and a handled-record transaction before the ack.
    var durableTurn: Double
    var durableTurnSender: Double

    /// The line the measuring process prints: the four figures, space-separated.
    var line: String { [roundTrip, roundTripSender, durableTurn, durableTurnSender].map { String($0) }.joined(separator: " ") }

    init(roundTrip: Double, roundTripSender: Double, durableTurn: Double, durableTurnSender: Double) {
        (self.roundTrip, self.roundTripSender, self.durableTurn, self.durableTurnSender) = (roundTrip, roundTripSender, durableTurn, durableTurnSender)
    }

    /// Reads `line`'s form back; nil for anything else (four finite, non-negative numbers).
    init?(line: String) {
        let numbers = line.split(separator: " ").compactMap { Double($0) }
        guard numbers.count == 4, line.split(separator: " ").count == 4, numbers.allSatisfy({ $0.isFinite && $0 >= 0 }) else { return nil }
        self.init(roundTrip: numbers[0], roundTripSender: numbers[1], durableTurn: numbers[2], durableTurnSender: numbers[3])
    }

    /// Each figure's median over `rounds`.
    static func median(_ rounds: [TurnCosts]) -> TurnCosts {
        TurnCosts(roundTrip: FloorBench.median(rounds.map(\.roundTrip)), roundTripSender: FloorBench.median(rounds.map(\.roundTripSender)),
                  durableTurn: FloorBench.median(rounds.map(\.durableTurn)), durableTurnSender: FloorBench.median(rounds.map(\.durableTurnSender)))
    }
}

/// The turns of one round, measured in a process of their own (`shieldbus-bench --floor-turns FOLDER OPERATIONS`),
/// the broker's side, which starts the plugin's side (`FloorPeer`) as its child: so that both can be held on one
/// core by `taskset`, which their threads inherit, or left to the scheduler.
enum FloorTurns {
    /// Runs a round's turns in a new process, on `core` alone when given, and reads its figures.
    static func measure(program: String, folder: String, operations: Int, core: Int?) throws -> TurnCosts {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let process = Process()
        let arguments = ["--floor-turns", folder, String(operations)]
        if let core {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/taskset")
            process.arguments = ["--cpu-list", String(core), program] + arguments
        } else {
            process.executableURL = URL(fileURLWithPath: program)
            process.arguments = arguments
        }
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0, let costs = TurnCosts(line: text.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw BenchFailure("the floor suite's turns (\((process.arguments ?? []).joined(separator: " "))) ended with status \(process.terminationStatus), printing '\(text)'")
        }
        return costs
    }

    /// The measuring process: a ROUTER in `folder`, its peer started, an unmeasured warm-up, then `operations` bare
    /// round trips and as many durable turns; prints their `TurnCosts.line`.
    static func serve(_ arguments: [String]) -> Int32 {
        guard arguments.count == 2, let operations = Int(arguments[1]), operations > 0 else {
            note("shieldbus-bench --floor-turns: wants FOLDER OPERATIONS")
            return 2
        }
        let folder = arguments[0]
        do {
            let program = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
            let endpoint = "ipc://\(folder)/turns.sock"
            let bound = try BoundRouter(endpoint)
            let router = bound.socket
            let peer = Process()
            peer.executableURL = URL(fileURLWithPath: program)
            peer.arguments = ["--floor-peer", endpoint, folder]
            try peer.run()
            defer { if peer.isRunning { peer.terminate() } }
            var frames: [Frame] = []
            guard try router.receive(into: &frames), frames.count == 2, frames[1] == FloorMessage.hello else {
                throw BenchFailure("the floor suite's peer process did not say hello within 10 s")
            }
            let turns = TurnDriver(router: router, peer: frames[0])
            let ledger = try SmallRowStore(path: folder + "/bus.sqlite", access: .exclusive)
            // Unmeasured: the stores' first pages, the statements, both processes' first uses.
            _ = try turns.run(FloorMessage.bare, count: 200, save: nil)
            _ = try turns.run(FloorMessage.durable, count: 200, save: ledger.save)
            let bare = try turns.run(FloorMessage.bare, count: operations, save: nil)
            let durable = try turns.run(FloorMessage.durable, count: operations, save: ledger.save)
            try turns.quit()
            peer.waitUntilExit()
            guard peer.terminationStatus == 0 else { throw BenchFailure("the floor suite's peer process exited with status \(peer.terminationStatus)") }
            print(TurnCosts(roundTrip: bare.total, roundTripSender: bare.sender, durableTurn: durable.total, durableTurnSender: durable.sender).line)
            return 0
        } catch {
            note("shieldbus-bench --floor-turns: \(error)")
            return 1
        }
    }
}

/// A ROUTER socket bound at an endpoint, in a libzmq context of its own (one I/O thread, as a broker's), closed
/// with it; it waits at most 10 s for a message.
final class BoundRouter {
    private let context: Context
    let socket: Socket

    init(_ endpoint: String) throws {
        context = try Context()
        socket = try Socket(context, .router)
        try socket.setLinger(milliseconds: 0)
        try socket.setReceiveTimeout(milliseconds: 10_000)
        try socket.bind(endpoint)
    }

    deinit {
        socket.close()
        context.shutdown()
    }
}

/// The broker's side of the turns: hands the peer an event, optionally after saving it, and waits for its
/// acknowledgement; CPU is read from both processes around a run of them.
final class TurnDriver {
    let router: Socket
    let peer: Frame
    private var nextSeq: UInt64 = 0

    init(router: Socket, peer: Frame) {
        self.router = router
        self.peer = peer
    }

    /// µs of CPU per turn: both processes, every thread (`total`), and this process's main thread (`sender`).
    func run(_ kind: Frame, count: Int, save: ((UInt64) throws -> Void)?) throws -> (total: Double, sender: Double) {
        let peerBefore = try peerCPU()
        let selfBefore = rusageMicroseconds(RUSAGE_SELF.rawValue)
        let threadBefore = cpuNanoseconds(CLOCK_THREAD_CPUTIME_ID) ?? 0
        var frames: [Frame] = []
        for _ in 0..<count {
            nextSeq += 1
            let seq = nextSeq
            try save?(seq)
            try router.send([peer, kind, FloorMessage.seq(seq), FloorBench.envelope])
            guard try router.receive(into: &frames), frames.count == 3, frames[1] == FloorMessage.ack, FloorMessage.seq(frames[2]) == seq else {
                throw BenchFailure("the floor suite's peer did not acknowledge event \(seq) within 10 s")
            }
        }
        let thread = Double((cpuNanoseconds(CLOCK_THREAD_CPUTIME_ID) ?? 0) - threadBefore) / 1000
        let own = rusageMicroseconds(RUSAGE_SELF.rawValue) - selfBefore
        let peerUsed = try peerCPU() - peerBefore
        return ((own + peerUsed) / Double(count), thread / Double(count))
    }

    private func peerCPU() throws -> Double {
        try router.send([peer, FloorMessage.cpu])
        var frames: [Frame] = []
        guard try router.receive(into: &frames), frames.count == 2, let used = Double(String(decoding: frames[1], as: UTF8.self)) else {
            throw BenchFailure("the floor suite's peer did not tell its CPU")
        }
        return used
    }

    func quit() throws { try router.send([peer, FloorMessage.quit]) }
}
