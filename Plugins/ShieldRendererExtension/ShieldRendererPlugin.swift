import Foundation
import ReferenceKit
import ShieldBusSDK

/// `shield-renderer`'s program: its `main` runs it, and a test hosts it in its own process. Its resources (the icon)
/// are this library's bundle, which a process and a test that hosts it find alike.
public enum ShieldRendererPlugin {
    public static let program = PluginProgram { _ in
        let (options, defaults) = try ReferencePlugin.load()
        return ReferenceShieldRenderer.make(options: options, defaults: defaults, resources: resources)
    }

    /// The folder of the renderer's own resources, as an extension's bundle.
    public static var resources: URL? { Bundle.module.url(forResource: "Resources", withExtension: nil) }
}
