import Foundation
import SQLite
import ZeroMQ

/// What the floor suite's two processes say to each other over a DEALER/ROUTER pair: the bench (the broker's side)
/// hands over an event and the peer (a plugin's side) acknowledges it, with or without recording it as handled.
enum FloorMessage {
    /// An event to record in the handled-events record before acknowledging it (frames: kind, seq, envelope).
    static let durable: Frame = Array("t".utf8)
    /// An event to acknowledge at once: a bare libzmq round trip between the processes.
    static let bare: Frame = Array("r".utf8)
    /// A question for the peer's CPU so far (answered as microseconds, in text).
    static let cpu: Frame = Array("c".utf8)
    /// The end: the peer closes its record and socket and exits.
    static let quit: Frame = Array("q".utf8)
    static let hello: Frame = Array("hello".utf8)
    static let ack: Frame = Array("a".utf8)

    /// A sequence number as eight bytes, big-endian.
    static func seq(_ value: UInt64) -> Frame { withUnsafeBytes(of: value.bigEndian, Array.init) }
    static func seq(_ frame: Frame) -> UInt64 { frame.count == 8 ? frame.reduce(0) { $0 << 8 | UInt64($1) } : 0 }
}

/// CPU time this process has used, every thread (`getrusage(RUSAGE_SELF)`), or its reaped children's, in µs.
func rusageMicroseconds(_ who: Int32) -> Double {
    var usage = rusage()
    getrusage(__rusage_who_t(who), &usage)
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1e6 + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec)
}

/// The plugin's side of the floor suite's turn (`shieldbus-bench --floor-peer ENDPOINT FOLDER`): a process of its own
/// with its own libzmq context and I/O thread, a DEALER connected to the bench's ROUTER, and a record of handled
/// events kept as a plugin keeps it (`HandledEvents`: a shared store in WAL mode with `synchronous = NORMAL`, each
/// event one counted write transaction — the look-up, the record, the tally and its note).
enum FloorPeer {
    static func serve(_ arguments: [String]) -> Int32 {
        guard arguments.count == 2 else {
            note("shieldbus-bench --floor-peer: wants ENDPOINT FOLDER")
            return 2
        }
        do {
            let record = try HandledRecord(path: arguments[1] + "/handled.sqlite")
            let context = try Context()
            let socket = try Socket(context, .dealer)
            defer {
                socket.close()
                context.shutdown()
            }
            try socket.setLinger(milliseconds: 0)
            try socket.connect(arguments[0])
            try socket.send([FloorMessage.hello])
            var frames: [Frame] = []
            while try socket.receive(into: &frames) {
                switch frames.first ?? [] {
                case FloorMessage.durable:
                    let seqFrame = frames.count > 1 ? frames[1] : []
                    try record.handleOnce(FloorMessage.seq(seqFrame))
                    try socket.send([FloorMessage.ack, seqFrame])
                case FloorMessage.bare:
                    try socket.send([FloorMessage.ack, frames.count > 1 ? frames[1] : []])
                case FloorMessage.cpu:
                    try socket.send([Array(String(rusageMicroseconds(RUSAGE_SELF.rawValue)).utf8)])
                case FloorMessage.quit:
                    return 0
                default:
                    note("shieldbus-bench --floor-peer: unknown message")
                    return 1
                }
            }
            return 0
        } catch {
            note("shieldbus-bench --floor-peer: \(error)")
            return 1
        }
    }
}

/// A record of handled events as a plugin's cursor store is kept: shared access, WAL, `synchronous = NORMAL`, and
/// each event handled one `CommitTally` transaction holding its look-up and its record.
final class HandledRecord {
    private let connection: SQLiteConnection
    private let tally: CommitTally

    init(path: String) throws {
        connection = try SQLiteConnection(path: path, access: .shared)
        try connection.enableWAL()
        tally = try CommitTally(connection: connection, path: path)
        try connection.execute("CREATE TABLE IF NOT EXISTS handled (seq INTEGER PRIMARY KEY)")
    }

    func handleOnce(_ seq: UInt64) throws {
        try tally.transaction {
            let seen = try connection.withStatement("SELECT 1 FROM handled WHERE seq = ?", bindings: [.integer(Int64(seq))]) { try $0.step() }
            guard !seen else { return }
            try connection.withStatement("INSERT INTO handled (seq) VALUES (?)", bindings: [.integer(Int64(seq))]) { try $0.run() }
        }
    }
}
