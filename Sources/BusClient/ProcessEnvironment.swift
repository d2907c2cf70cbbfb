#if canImport(Glibc)
import Glibc
#endif

/// The process's environment variables, read straight from `environ`: the dictionary
/// `ProcessInfo.processInfo.environment` gives, more cheaply. Foundation splits each `NAME=value` at
/// the `=` by Characters (grapheme breaking) and grows its dictionary insert by insert, and a short-lived extension
/// process pays that at every callback (docs/benchmarks.md says where a launch's time goes).
public enum ProcessEnvironment {
    /// Every variable, by name (an entry without `=` is skipped, and the last of two same-named entries wins, as
    /// `ProcessInfo.environment` does).
    public static var current: [String: String] {
        var count = 0
        while environ[count] != nil { count += 1 }
        // Sized once: grown insert by insert, the dictionary rehashes every key at each doubling (most of the cost).
        var variables = [String: String](minimumCapacity: count)
        var entry = environ
        while let text = entry.pointee {
            if let equals = strchr(text, 0x3D) {  // "="
                let name = String(decoding: UnsafeRawBufferPointer(start: text, count: equals - text), as: UTF8.self)
                variables[name] = String(cString: equals + 1)
            }
            entry += 1
        }
        return variables
    }

    /// One variable, or nil when it is not set: `getenv`, with no dictionary of the whole environment made for it (a
    /// day forked from explore's broker template would otherwise make that dictionary at each of its few reads).
    public static func value(of name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }
}
