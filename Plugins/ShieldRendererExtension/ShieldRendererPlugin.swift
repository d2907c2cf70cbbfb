import Foundation
import ReferenceKit
import ShieldBusSDK

/// `shield-renderer`'s program: its `main` runs it, and a test hosts it in its own process. Its resources (the icon)
/// are this library's bundle beside the program, which a process and a test that hosts it find alike; a program
/// copied without it is refused at launch (`ProgramResources`), not stopped by `Bundle.module` at every launch.
public enum ShieldRendererPlugin {
    public static let program = PluginProgram { _ in
        let resources = try ProgramResources.folder("Resources", inBundle: resourceBundle)
        let (options, defaults) = try ReferencePlugin.load()
        return ReferenceShieldRenderer.make(options: options, defaults: defaults, resources: resources)
    }

    /// The renderer's resource bundle, as SwiftPM names it: `<Package>_<Target>` (Package.swift's `resources:`).
    public static let resourceBundle = "ShieldBus_ShieldRendererExtension"
}
