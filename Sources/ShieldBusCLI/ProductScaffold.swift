// `shieldbus plugin new --product`: a whole product, as a renamed copy of the shipped Bedtime (a product explore holds
// to its promise): its shared library, its extensions and app, its configuration with its promise, its app in a
// catalog of its own, and a two-night scenario with probes.
import Foundation

/// The files of a new product made from the shipped Bedtime, and its targets.
struct ProductScaffold {
    /// The template product, as it ships in the package.
    enum Template {
        static let name = "bedtime"
        static let stem = "Bedtime"
        static let scenario = "Config/scenarios/bedtime-night.yml"
        static let configuration = "Config/bedtime.yml"
    }

    let name: PluginName
    let packagePath: String

    var stem: String { name.typeStem }
    var libraryName: String { stem + "Kit" }
    /// The library of the extensions and the app, which a test can host in its own process.
    var extensionsName: String { stem + "Extensions" }
    /// The companion app's display name: `wind-down` → "Wind Down".
    var displayName: String { name.name.split(separator: "-").map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined(separator: " ") }
    var bundleIdentifier: String { "com.example." + name.name.replacingOccurrences(of: "-", with: "") }
    var configurationPath: String { "Config/\(name.name).yml" }
    var catalogPath: String { "Config/\(name.name)-apps.yml" }
    var scenarioPath: String { "Config/scenarios/\(name.name)-night.yml" }
    var folders: [String] { ["Plugins/\(stem)", "Plugins/\(libraryName)", "Plugins/\(extensionsName)"] }

    /// Relative path → contents.
    func files() throws -> [(path: String, contents: String)] {
        var files: [(path: String, contents: String)] = []
        for (from, to) in [("Plugins/\(Template.stem)Kit", "Plugins/\(libraryName)"), ("Plugins/\(Template.stem)Extensions", "Plugins/\(extensionsName)"),
                           ("Plugins/\(Template.stem)", "Plugins/\(stem)")] {
            let names = try templateFolder(from)
            for file in names.sorted() where file.hasSuffix(".swift") {
                let template = try read(from + "/" + file)
                try refuseShadowing(template)
                files.append((to + "/" + file.replacingOccurrences(of: Template.stem, with: stem), try swift(template)))
            }
        }
        let scenarioLine = "\nscenario: scenarios/\(name.name)-night.yml\n"
        let configuration = try yaml(read(Template.configuration))
        guard configuration.contains(scenarioLine) else { throw PluginScaffoldError.templateChanged(what: "its configuration's `scenario:` line") }
        files.append((configurationPath, configuration.replacingOccurrences(
            of: scenarioLine, with: scenarioLine + "catalog: \(name.name)-apps.yml    # the product's app, added to the shipped catalog\n")))
        files.append((scenarioPath, try yaml(read(Template.scenario))))
        files.append((catalogPath, """
            # \(displayName)'s apps, added to the shipped catalog (Config/catalog.yml; docs/configuration-reference.md § 2).
            apps:
              - {bundle: \(bundleIdentifier), name: \(displayName), category: productivity-finance}

            """))
        return files
    }

    /// The targets to add to Package.swift: the shared library, the library holding every extension and the app
    /// (hostable by a test), and the executable, a thin `main` that runs it.
    var packageTargets: [String] {
        let dependencies = (PluginTemplates.dependencies + ["MonitorKit"]).map { "\"\($0)\"" }.joined(separator: ", ")
        return [
            #".target(name: "\#(libraryName)", dependencies: [\#(dependencies)], path: "Plugins/\#(libraryName)", \#(PluginTemplates.swiftSettings)),"#,
            #".target(name: "\#(extensionsName)", dependencies: [\#(dependencies), "\#(libraryName)"], path: "Plugins/\#(extensionsName)", \#(PluginTemplates.swiftSettings)),"#,
            #".executableTarget(name: "\#(name.name)", dependencies: [\#(dependencies), "\#(extensionsName)"], path: "Plugins/\#(stem)", \#(PluginTemplates.swiftSettings)),"#,
        ]
    }

    /// What to do next, printed after the files are written.
    var nextSteps: String {
        """
        Created the product \(name.name), a copy of Bedtime to make your own:
          Plugins/\(libraryName)/       what the app and the extensions share (the window, the pass, the App Group's keys)
          Plugins/\(extensionsName)/  the monitor, the shield, the action and the app (a library a test can host)
          Plugins/\(stem)/          the one executable that runs them (principalClass picks one)
          \(configurationPath)       its App Group with slices, its store's owner, the pick, and its promise
          \(catalogPath)  its app, added to the shipped catalog
          \(scenarioPath)  two nights with probes (`expect:`)
          Package.swift: the targets \(libraryName), \(extensionsName) and \(name.name)

        Build it, play its nights, and explore it:
          swift build --product shieldbus && swift build --product \(name.name)
          .build/debug/shieldbus run --config \(configurationPath)
          .build/debug/shieldbus explore --config \(configurationPath) --days 100

        Then change the code and the promise together (docs/writing-a-product.md, docs/promises.md).
        """
    }

    // MARK: Renaming

    private func read(_ path: String) throws -> String {
        do {
            return try String(contentsOfFile: packagePath + "/" + path, encoding: .utf8)
        } catch {
            throw PluginScaffoldError.noTemplate(path: path, package: packagePath)
        }
    }

    private func templateFolder(_ path: String) throws -> [String] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: packagePath + "/" + path) else {
            throw PluginScaffoldError.noTemplate(path: path, package: packagePath)
        }
        return names
    }

    /// The template's Swift renamed: identifiers to the stem, what the person reads to the display name, the App
    /// Group, activities, store and deep links to the product's name; the naive twin's seeded flaw left out.
    func swift(_ text: String) throws -> String {
        var text = withoutTheFlaw(text)
        guard !text.lowercased().contains("flaw") else { throw PluginScaffoldError.templateChanged(what: "the naive twin's flaw") }
        // What the person reads: string literals, but not a principal class's name ("BedtimeMonitor").
        text = replacing(#""[^"\n]*""#, in: text) { literal in
            literal.replacingOccurrences(of: Template.stem, with: literal.range(of: #"^"\#(Template.stem)[A-Z][A-Za-z]*"$"#, options: .regularExpression) != nil
                                         ? Placeholder.stem : Placeholder.displayName)
        }
        return sortingImports(filled(text.replacingOccurrences(of: Template.stem, with: Placeholder.stem).replacingOccurrences(of: Template.name, with: Placeholder.name)))
    }

    /// The template's configuration or scenario renamed: the companion app to the display name, the rest to the name.
    /// Class names (`principalClass: BedtimeMonitor`) and folders take the stem.
    func yaml(_ text: String) throws -> String {
        let code = replacing(#"Plugins/\#(Template.stem)|\#(Template.stem)[A-Z]"#, in: text) { $0.replacingOccurrences(of: Template.stem, with: Placeholder.stem) }
        return filled(code.replacingOccurrences(of: Template.stem, with: Placeholder.displayName).replacingOccurrences(of: Template.name, with: Placeholder.name))
    }

    /// A stem that is a type the template uses (`date` → `Date`, `app` → `App`) would shadow it: the copy would not build.
    private func refuseShadowing(_ template: String) throws {
        var rest = template[...]
        while let range = rest.range(of: #"\b[A-Z][A-Za-z0-9]*\b"#, options: .regularExpression) {
            let type = rest[range]
            if !type.hasPrefix(Template.stem), type == stem || type == libraryName {
                throw PluginScaffoldError.invalidName(name.name, reason: "its type `\(stem)` would hide the `\(type)` the product's code uses")
            }
            rest = rest[range.upperBound...]
        }
    }

    /// Marks for the new names, put in a single pass over the template and filled after: a new name that contains the
    /// template's ("bedtime-lite") is never renamed twice.
    private enum Placeholder {
        static let stem = "\u{1}S", displayName = "\u{1}D", name = "\u{1}N"
    }

    private func filled(_ text: String) -> String {
        text.replacingOccurrences(of: Placeholder.stem, with: stem).replacingOccurrences(of: Placeholder.displayName, with: displayName)
            .replacingOccurrences(of: Placeholder.name, with: name.name)
    }

    /// The imports in order again (the library's new name sorts elsewhere).
    private func sortingImports(_ text: String) -> String {
        var lines = text.components(separatedBy: "\n")
        guard let first = lines.firstIndex(where: { $0.hasPrefix("import ") }) else { return text }
        let end = lines[first...].firstIndex(where: { !$0.hasPrefix("import ") }) ?? lines.endIndex
        lines[first..<end] = ArraySlice(lines[first..<end].sorted())
        return lines.joined(separator: "\n")
    }

    private func withoutTheFlaw(_ text: String) -> String {
        var lines = text.components(separatedBy: "\n")
        if let index = lines.firstIndex(where: { $0.contains("static var flaw") }) {
            lines.remove(at: index)
            if index > 0, lines[index - 1].contains("flaw") { lines.remove(at: index - 1) }
        }
        var text = lines.joined(separator: "\n")
        text = replacing(#"\#(Template.stem)\.flaw == "[^"]*" \? [^:\n]+ : "#, in: text) { _ in "" }
        return replacing(#"\#(Template.stem)\.flaw == "[^"]*" \|\| "#, in: text) { _ in "" }
    }

    private func replacing(_ pattern: String, in text: String, with transform: (String) -> String) -> String {
        var result = "", rest = text[...]
        while let range = rest.range(of: pattern, options: .regularExpression) {
            result += rest[..<range.lowerBound] + transform(String(rest[range]))
            rest = rest[range.upperBound...]
        }
        return result + rest
    }
}
