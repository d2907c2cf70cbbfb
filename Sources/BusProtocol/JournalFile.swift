import Foundation

/// Opens a journal for writing without replacing what is at its path.
///
/// `FileManager.createFile` writes by renaming a new file over the path; run as root with `--journal /dev/null`, that
/// (and a `chmod` after it) turned the machine's /dev/null into a regular file only root could write. Here a missing
/// file is created owner-only, an existing regular file is truncated (unless appending) and made owner-only — a
/// person's whole day — and anything else (a device, a FIFO) is written as it is.
public enum JournalFile {
    public struct Opened {
        public let handle: FileHandle
        /// False for a device or a FIFO: nothing to truncate, cut or read back.
        public let isRegularFile: Bool
    }

    public static func openForWriting(_ path: String, appending: Bool) throws -> Opened {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: path, NSUnderlyingErrorKey: POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)])
        }
        var status = stat()
        let isRegularFile = fstat(descriptor, &status) == 0 && (status.st_mode & S_IFMT) == S_IFREG
        if isRegularFile {
            if !appending { _ = ftruncate(descriptor, 0) }
            fchmod(descriptor, 0o600)
        }
        return Opened(handle: FileHandle(fileDescriptor: descriptor, closeOnDealloc: true), isRegularFile: isRegularFile)
    }
}
