import Foundation

/// A plugin program's own resources: the SwiftPM resource bundle of one of its targets (`<Package>_<Target>.resources`,
/// what `Bundle.module` reads), which the build leaves beside the program and which must travel with it.
///
/// `Bundle.module` looks beside the program, then in the folder the program was built in, and stops the process when
/// it finds neither: a program copied without its bundle would crash at every launch, and its supervisor would start
/// it again and again. Looked for here beside the program only — where the broker's built products and a test's host
/// have it — a missing bundle is a configuration error, which the supervisor does not retry
/// (`PluginExitStatus.configurationError`), saying what to copy where, whether or not the build folder is still there.
public enum ProgramResources {
    /// The folder `named` of the bundle `bundle` (e.g. `ShieldBus_ShieldRendererExtension`) beside the running program;
    /// `programFolder`: the folder it runs from (by default `runningProgramFolder`, where `Bundle.module` looks first).
    public static func folder(_ named: String, inBundle bundle: String, programFolder: URL? = nil) throws -> URL {
        // Paths joined as text and the main bundle never made: this runs at every launch of a short-lived extension.
        let programPath = programFolder?.path ?? runningProgramFolder()
        let folder = "\(programPath)/\(bundle).resources/\(named)"
        guard access(folder, R_OK | X_OK) == 0 else {
            let code = errno
            let plugin = LaunchEnvironment["SHIELDBUS_PLUGIN_NAME"].map { "plugin '\($0)': " } ?? ""
            throw PluginError.configuration("""
                \(plugin)the program's resource bundle is missing: \(folder) cannot be read (\(String(cString: strerror(code)))); \
                copy the \(bundle).resources folder from where the program was built (its build products, e.g. .build/release/) \
                beside the program, into \(programPath)/
                """)
        }
        return URL(fileURLWithPath: folder, isDirectory: true)
    }

    /// The folder of the running program's executable — `Bundle.main.bundleURL`'s path for a program outside an app
    /// bundle — from `/proc/self/exe`, where Foundation reads it too; `Bundle.main`'s own (a `CFBundle` looked up and
    /// made for the program) is left unmade.
    public static func runningProgramFolder() -> String {
        let executable = withUnsafeTemporaryAllocation(of: CChar.self, capacity: Int(PATH_MAX)) { buffer -> String? in
            let length = readlink("/proc/self/exe", buffer.baseAddress!, buffer.count)
            guard length > 0, length < buffer.count else { return nil }
            return String(decoding: UnsafeRawBufferPointer(start: buffer.baseAddress, count: length), as: UTF8.self)
        }
        guard let executable, let slash = executable.utf8.lastIndex(of: UInt8(ascii: "/")) else { return Bundle.main.bundleURL.path }
        return slash == executable.utf8.startIndex ? "/" : String(executable[..<slash])
    }
}
