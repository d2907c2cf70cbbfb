import Foundation

/// The package's Package.swift, edited as text: new targets go just above a marker line in the targets list,
/// so the file keeps its layout and comments.
struct PackageManifest {
    static let marker = "// shieldbus plugin new: new plugins go above this line"

    let path: String
    private(set) var text: String

    init(packagePath: String) throws {
        path = packagePath + "/Package.swift"
        guard let contents = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw PluginScaffoldError.noManifest(path: packagePath)
        }
        text = contents
    }

    /// Whether a target of this name is declared.
    func declaresTarget(_ name: String) -> Bool {
        text.contains("(name: \"\(name)\"")
    }

    /// Inserts `lines` above the marker, indented like it.
    mutating func insertAboveMarker(_ lines: [String]) throws {
        guard let markerRange = text.range(of: Self.marker) else {
            throw PluginScaffoldError.noMarker(manifest: path, marker: Self.marker)
        }
        let lineStart = text[..<markerRange.lowerBound].lastIndex(of: "\n").map { text.index(after: $0) } ?? text.startIndex
        let indentation = String(text[lineStart..<markerRange.lowerBound])
        text.insert(contentsOf: lines.map { indentation + $0 + "\n" }.joined(), at: lineStart)
    }

    func write() throws {
        try text.write(toFile: path, atomically: true, encoding: .utf8)
    }
}
