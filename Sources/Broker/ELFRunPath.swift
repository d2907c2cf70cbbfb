import Foundation

/// The folders an ELF executable asks the loader to search for its libraries (DT_RUNPATH, or the older DT_RPATH),
/// with `$ORIGIN` resolved: a sandbox must show them for the program to load. Empty for anything that is not a
/// 64-bit little-endian ELF file, or has neither entry (a script, a statically linked program).
enum ELFRunPath {
    static func folders(of path: String) -> [String] {
        guard let file = ELFFile(path: path) else { return [] }
        let read = file.read, integer = ELFFile.integer
        let headerBytes = file.header
        let programHeaders = integer(headerBytes, 0x20, 8), entrySize = Int(integer(headerBytes, 0x36, 2))
        let entryCount = Int(integer(headerBytes, 0x38, 2))
        guard entrySize >= 56, entryCount < 4096, let table = read(programHeaders, entrySize * entryCount) else { return [] }
        // Loadable segments map addresses to file offsets; the dynamic segment lists the string table by address.
        var loads: [(address: UInt64, offset: UInt64, size: UInt64)] = []
        var dynamic: (offset: UInt64, size: UInt64)?
        for index in 0..<entryCount {
            let base = index * entrySize
            let type = integer(table, base, 4)
            if type == 1 { loads.append((integer(table, base + 0x10, 8), integer(table, base + 0x08, 8), integer(table, base + 0x20, 8))) }
            if type == 2 { dynamic = (integer(table, base + 0x08, 8), integer(table, base + 0x20, 8)) }
        }
        guard let dynamic, dynamic.size < 1 << 20, let entries = read(dynamic.offset, Int(dynamic.size)) else { return [] }
        var stringTable: UInt64?, runPath: UInt64?
        for base in stride(from: 0, to: entries.count - 15, by: 16) {
            let tag = integer(entries, base, 8), value = integer(entries, base + 8, 8)
            if tag == 0 { break }
            if tag == 5 { stringTable = value }  // DT_STRTAB
            if tag == 29 || (tag == 15 && runPath == nil) { runPath = value }  // DT_RUNPATH wins over DT_RPATH
        }
        guard let stringTable, let runPath,
              let load = loads.first(where: { stringTable >= $0.address && stringTable < $0.address + $0.size }),
              let bytes = read(load.offset + (stringTable - load.address) + runPath, 4096) else { return [] }
        let text = String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
        let origin = PluginSandbox.folder(of: path)
        return text.split(separator: ":").map { expandingOrigin(in: $0, origin: origin) }
    }

    /// `entry` with each `$ORIGIN` and `${ORIGIN}` replaced by `origin` (by hand: Foundation's `replacingOccurrences`
    /// bridges to NSString, at every launch's plan).
    static func expandingOrigin(in entry: Substring, origin: String) -> String {
        var result = "", rest = entry
        while let dollar = rest.firstIndex(of: "$") {
            result += rest[..<dollar]
            let after = rest[dollar...]
            if after.hasPrefix("${ORIGIN}") {
                result += origin
                rest = after.dropFirst("${ORIGIN}".count)
            } else if after.hasPrefix("$ORIGIN") {
                result += origin
                rest = after.dropFirst("$ORIGIN".count)
            } else {
                result += "$"
                rest = after.dropFirst()
            }
        }
        return result + rest
    }
}
