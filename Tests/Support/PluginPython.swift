import Foundation

/// python3 from PATH as a plugin's interpreter. A sandboxed plugin sees the system's /usr and what its configuration
/// names: a Python installed elsewhere (pyenv's, in the home folder) is shown to it through `readable:`, and named by
/// its own executable, not by a shim script that needs the rest of the home folder.
public enum PluginPython {
    /// The interpreter's executable and the folders its library lives in (nil when python3 is not on PATH).
    public static let interpreter: (executable: String, prefixes: [String])? = {
        let searchPath = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        guard let python = searchPath.split(separator: ":").map({ "\($0)/python3" }).first(where: FileManager.default.isExecutableFile(atPath:)),
              let (status, output) = try? runToEnd(python, ["-c", "import sys; print(sys.executable); print(sys.prefix); print(sys.base_prefix)"]),
              status == 0 else { return nil }
        let lines = output.split(separator: "\n").map(String.init)
        guard lines.count >= 3 else { return nil }
        return (lines[0], Array(Set(lines[1...2].filter { !$0.hasPrefix("/usr") })).sorted())
    }()

    /// The plugin entry's `executable:` and `readable:` fields, for a YAML flow mapping.
    public static var entryFields: String {
        guard let interpreter else { return "executable: python3" }
        return "executable: \"\(interpreter.executable)\", readable: [\(interpreter.prefixes.map { "\"\($0)\"" }.joined(separator: ", "))]"
    }
}
