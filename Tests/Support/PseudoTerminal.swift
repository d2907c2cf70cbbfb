import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A pseudo-terminal for a command that behaves differently on a terminal (colors, a progress bar): its standard
/// output or error is the terminal's side, and everything written there is read from the other side as it comes (a
/// full pty buffer would stop the command).
public final class PseudoTerminal: @unchecked Sendable {  // `bytes` is read and written under `lock`
    private var controller: Int32 = -1
    private var device: Int32 = -1
    private let lock = NSLock()
    private var bytes: [UInt8] = []
    private var reader: Thread?

    public init() throws {
        guard openpty(&controller, &device, nil, nil, nil) == 0 else {
            throw NSError(domain: NSPOSIXErrorDomain, code: Int(errno), userInfo: [NSLocalizedDescriptionKey: "openpty failed"])
        }
        let controller = controller
        reader = Thread { [weak self] in
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = read(controller, &buffer, buffer.count)
                guard count > 0 else { return }  // EIO once the terminal's side is closed everywhere
                self?.lock.withLock { self?.bytes += buffer[0..<count] }
            }
        }
        reader?.start()
    }

    /// The terminal's side, for a process's standard output or error (isatty is true there).
    public var terminal: FileHandle { FileHandle(fileDescriptor: device, closeOnDealloc: false) }

    /// What was written to the terminal so far (a newline arrives as "\r\n").
    public var text: String { lock.withLock { String(decoding: bytes, as: UTF8.self) } }

    deinit {
        close(device)
        close(controller)
    }
}
