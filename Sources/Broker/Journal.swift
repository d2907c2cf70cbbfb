import Foundation

/// The journal: every sequenced event's envelope, one JSON object per line, in sequence order.
///
/// It is the record of a run: `shieldbus replay` plays it back, and two virtual runs of one scenario
/// produce identical journals.
final class Journal {
    private let handle: FileHandle
    private var buffer: [UInt8] = []
    let path: String

    init(path: String) throws {
        self.path = path
        _ = FileManager.default.createFile(atPath: path, contents: nil)
        guard let handle = FileHandle(forWritingAtPath: path) else {
            throw CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: path])
        }
        try handle.truncate(atOffset: 0)
        fchmod(handle.fileDescriptor, 0o600)  // the person's whole day: its owner's alone, even if an older file was wider
        self.handle = handle
        buffer.reserveCapacity(1 << 16)
    }

    func append(_ envelopeJSON: [UInt8]) {
        buffer.append(contentsOf: envelopeJSON)
        buffer.append(0x0A)
        if buffer.count >= 1 << 16 { flush() }
    }

    func flush() {
        guard !buffer.isEmpty else { return }
        handle.write(Data(buffer))
        buffer.removeAll(keepingCapacity: true)
    }

    func close() {
        flush()
        try? handle.close()
    }
}
