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
    /// `programFolder`: the folder it runs from (`Bundle.main`'s, where `Bundle.module` looks first).
    public static func folder(_ named: String, inBundle bundle: String, programFolder: URL = Bundle.main.bundleURL) throws -> URL {
        let bundleFolder = programFolder.appendingPathComponent("\(bundle).resources", isDirectory: true)
        let folder = bundleFolder.appendingPathComponent(named, isDirectory: true)
        // `access`, not FileManager: this runs at every launch of a short-lived extension.
        guard access(folder.path, R_OK | X_OK) == 0 else {
            let code = errno
            let plugin = LaunchEnvironment["SHIELDBUS_PLUGIN_NAME"].map { "plugin '\($0)': " } ?? ""
            throw PluginError.configuration("""
                \(plugin)the program's resource bundle is missing: \(folder.path) cannot be read (\(String(cString: strerror(code)))); \
                copy the \(bundle).resources folder from where the program was built (its build products, e.g. .build/release/) \
                beside the program, into \(programFolder.path)/
                """)
        }
        return folder
    }
}
