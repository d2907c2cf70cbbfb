// shield-renderer: the reference shield configuration — the product's own voice, and the first re-block path.

import Foundation
import ReferenceKit
import ShieldBusSDK

PluginHost.run {
    let (options, defaults) = ReferencePlugin.setUp()
    return ReferenceShieldRenderer.make(options: options, defaults: defaults, resources: Bundle.module.url(forResource: "Resources", withExtension: nil))
}
