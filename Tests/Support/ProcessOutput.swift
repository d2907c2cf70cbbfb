import Foundation

extension Process {
    /// Runs the process with its standard output and error going to files (created empty; `nil` is /dev/null, the
    /// same path twice is one file), then closes this process's descriptors of them: the child has its own copies.
    /// A test process starts hundreds of children, and a descriptor kept until its `Process` is released counts
    /// toward the 1,024 that Foundation's `Process` can wait on — beyond it `waitUntilExit` hangs in `pselect`.
    public func run(outputTo outputPath: String?, errorsTo errorPath: String?) throws {
        var opened: [String: FileHandle] = [:]
        defer { for handle in opened.values { try? handle.close() } }
        func handle(_ path: String?) throws -> FileHandle {
            guard let path else { return FileHandle.nullDevice }
            if let handle = opened[path] { return handle }
            guard FileManager.default.createFile(atPath: path, contents: nil), let handle = FileHandle(forWritingAtPath: path) else {
                throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path])
            }
            opened[path] = handle
            return handle
        }
        standardOutput = try handle(outputPath)
        standardError = try handle(errorPath)
        try run()
    }
}
