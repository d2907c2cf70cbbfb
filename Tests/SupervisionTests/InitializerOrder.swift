import Foundation

/// The constructors an ELF program's own `.init_array` runs, in order, by their symbols' names: what runs before `main`
/// in that program after its shared libraries' constructors (the loader runs a library's before the program's).
struct InitializerOrder {
    let names: [String]

    enum Problem: Error, CustomStringConvertible {
        case notELF(String), malformed(String), noSection(String, String), unnamed(String, UInt64)
        var description: String {
            switch self {
            case .notELF(let path): "\(path) is not a 64-bit little-endian ELF program"
            case .malformed(let path): "\(path): an ELF header or section points outside the file (a program still being written?)"
            case .noSection(let path, let name): "\(path) has no \(name) section"
            case .unnamed(let path, let address): "\(path): no symbol at the constructor address 0x\(String(address, radix: 16))"
            }
        }
    }

    private struct Section { let name: String, type: UInt32, address: UInt64, offset: Int, size: Int, link: Int }

    init(program path: String) throws {
        let file = try Data(contentsOf: URL(fileURLWithPath: path), options: .alwaysMapped)
        names = try file.withUnsafeBytes { try Self.constructors(in: $0, path) }
    }

    private static func constructors(in file: UnsafeRawBufferPointer, _ path: String) throws -> [String] {
        // Every read is checked against the file: a truncated or half-written program fails the test, not the process.
        func integer(_ at: Int, _ width: Int) throws -> UInt64 {
            guard at >= 0, at <= file.count - width else { throw Problem.malformed(path) }
            return (0..<width).reduce(0) { $0 | UInt64(file[at + $1]) << (8 * UInt64($1)) }
        }
        func word(_ at: Int) throws -> UInt64 { try integer(at, 8) }
        func offset(_ value: UInt64) throws -> Int {
            guard let offset = Int(exactly: value), offset <= file.count else { throw Problem.malformed(path) }
            return offset
        }
        guard file.count > 64, Array(file.prefix(6)) == [0x7F, 0x45, 0x4C, 0x46, 2, 1] else { throw Problem.notELF(path) }
        let (headers, headerSize, count, namesIndex) = (try offset(word(0x28)), Int(try integer(0x3A, 2)), Int(try integer(0x3C, 2)), Int(try integer(0x3E, 2)))
        guard headerSize == 64, namesIndex < count else { throw Problem.malformed(path) }
        let raw = try (0..<count).map { index -> (name: Int, section: Section) in
            let at = headers + index * headerSize
            let section = Section(name: "", type: UInt32(try integer(at + 4, 4)), address: try word(at + 0x10), offset: try offset(word(at + 0x18)),
                                  size: try offset(word(at + 0x20)), link: Int(try integer(at + 0x28, 4)))
            guard section.offset <= file.count - section.size else { throw Problem.malformed(path) }
            return (Int(try integer(at, 4)), section)
        }
        func string(in table: Section, at offset: Int) throws -> String {
            let start = table.offset + offset
            guard offset >= 0, start < table.offset + table.size else { throw Problem.malformed(path) }
            let end = file[start..<(table.offset + table.size)].firstIndex(of: 0) ?? table.offset + table.size
            return String(decoding: file[start..<end], as: UTF8.self)
        }
        let sections = try raw.map { Section(name: try string(in: raw[namesIndex].section, at: $0.name), type: $0.section.type, address: $0.section.address,
                                              offset: $0.section.offset, size: $0.section.size, link: $0.section.link) }
        guard let initArray = sections.first(where: { $0.name == ".init_array" }) else { throw Problem.noSection(path, ".init_array") }
        guard let symbols = sections.first(where: { $0.type == 2 }) else { throw Problem.noSection(path, ".symtab") }  // SHT_SYMTAB
        guard symbols.link < sections.count else { throw Problem.malformed(path) }
        // A linker may leave a position-independent program's entries zero and say them only in their relocations
        // (R_X86_64_RELATIVE / R_AARCH64_RELATIVE: the address is the addend).
        var relocated: [UInt64: UInt64] = [:]
        for rela in sections where rela.type == 4 {  // SHT_RELA
            for at in stride(from: rela.offset, to: rela.offset + rela.size - 23, by: 24) { relocated[try word(at)] = try word(at + 16) }
        }
        let entries = try stride(from: 0, to: initArray.size - 7, by: 8).map { entry in
            let address = try word(initArray.offset + entry)
            return address != 0 ? address : relocated[initArray.address + UInt64(entry)] ?? 0
        }
        let wanted = Set(entries.filter { $0 != 0 })
        var named: [UInt64: String] = [:]
        // Functions defined in the program (an undefined symbol's value is 0: never a constructor's address).
        for at in stride(from: symbols.offset, to: symbols.offset + symbols.size - 23, by: 24) where try integer(at + 4, 1) & 0xF == 2 && integer(at + 6, 2) != 0 {
            let address = try word(at + 8)
            if wanted.contains(address) { named[address] = try string(in: sections[symbols.link], at: Int(try integer(at, 4))) }
        }
        return try entries.map { address in
            guard let name = named[address] else { throw Problem.unnamed(path, address) }
            return name
        }
    }

    /// Where the first constructor whose name contains `part` runs, if the program runs one.
    func position(of part: String) -> Int? { names.firstIndex { $0.contains(part) } }
}
