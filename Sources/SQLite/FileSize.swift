#if canImport(Glibc)
import Glibc
#endif

/// The size of a file by `stat`, nil when it cannot be read. `FileManager.attributesOfItem` builds a dictionary of
/// every attribute and looks up the owner's and group's names (NSS) to answer the same question; a short-lived
/// extension asks it at each store it opens, and the broker at each plugin start (docs/benchmarks.md,
/// "Explore and launches").
public enum FileSize {
    public static func of(_ path: String) -> Int64? {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        return Int64(status.st_size)
    }
}
