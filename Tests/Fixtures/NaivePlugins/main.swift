// naive-plugin: the reference plugins with exactly one of the seeds' bugs each (NAIVE_FLAW), for the lesson tests.
//
// Usage: naive-plugin monitor|shield|action|app   (the flaw comes from the NAIVE_FLAW environment variable)

import Foundation
import NaivePluginKit
import ShieldBusSDK

guard NaivePlugin.kinds.contains(CommandLine.arguments.dropFirst().first ?? "") else {
    FileHandle.standardError.write(Data("usage: naive-plugin monitor|shield|action|app (NAIVE_FLAW=…)\n".utf8))
    exit(64)
}
PluginHost.run(NaivePlugin.program)
