import Foundation

/// The constructors an ELF program's own `.init_array` runs, in order, by their symbols' names: what runs before `main`
/// in that program after its shared libraries' constructors (the loader runs a library's before the program's).
struct InitializerOrder {
    let names: [String]

    enum Problem: Error, CustomStringConvertible {
        case notELF(String), noSection(String, String), unnamed(String, UInt64)
        var description: String {
            switch self {
            case .notELF(let path): "\(path) is not a 64-bit little-endian ELF program"
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
        func integer(_ at: Int, _ width: Int) -> UInt64 {
            (0..<width).reduce(0) { $0 | UInt64(file[at + $1]) << (8 * UInt64($1)) }
        }
        func word(_ at: Int) -> UInt64 { UInt64(littleEndian: file.loadUnaligned(fromByteOffset: at, as: UInt64.self)) }
        guard file.count > 64, Array(file.prefix(6)) == [0x7F, 0x45, 0x4C, 0x46, 2, 1] else { throw Problem.notELF(path) }
        let (headers, headerSize, count, namesIndex) = (Int(word(0x28)), Int(integer(0x3A, 2)), Int(integer(0x3C, 2)), Int(integer(0x3E, 2)))
        let raw = (0..<count).map { index -> (name: Int, section: Section) in
            let at = headers + index * headerSize
            return (Int(integer(at, 4)), Section(name: "", type: UInt32(integer(at + 4, 4)), address: word(at + 0x10),
                                                 offset: Int(word(at + 0x18)), size: Int(word(at + 0x20)), link: Int(integer(at + 0x28, 4))))
        }
        func string(in table: Section, at offset: Int) -> String {
            let start = table.offset + offset
            let end = file[start...].firstIndex(of: 0) ?? file.endIndex
            return String(decoding: file[start..<end], as: UTF8.self)
        }
        let sections = raw.map { Section(name: string(in: raw[namesIndex].section, at: $0.name), type: $0.section.type, address: $0.section.address,
                                          offset: $0.section.offset, size: $0.section.size, link: $0.section.link) }
        guard let initArray = sections.first(where: { $0.name == ".init_array" }) else { throw Problem.noSection(path, ".init_array") }
        guard let symbols = sections.first(where: { $0.type == 2 }) else { throw Problem.noSection(path, ".symtab") }  // SHT_SYMTAB
        // A linker may leave a position-independent program's entries zero and say them only in their relocations
        // (R_X86_64_RELATIVE / R_AARCH64_RELATIVE: the address is the addend).
        var relocated: [UInt64: UInt64] = [:]
        for rela in sections where rela.type == 4 {  // SHT_RELA
            for at in stride(from: rela.offset, to: rela.offset + rela.size, by: 24) { relocated[word(at)] = word(at + 16) }
        }
        let entries = stride(from: 0, to: initArray.size, by: 8).map { entry in
            let address = word(initArray.offset + entry)
            return address != 0 ? address : relocated[initArray.address + UInt64(entry)] ?? 0
        }
        let wanted = Set(entries)
        var named: [UInt64: String] = [:]
        for at in stride(from: symbols.offset, to: symbols.offset + symbols.size, by: 24) where file[at + 4] & 0xF == 2 {  // STT_FUNC
            if wanted.contains(word(at + 8)) { named[word(at + 8)] = string(in: sections[symbols.link], at: Int(integer(at, 4))) }
        }
        return try entries.map { address in
            guard let name = named[address] else { throw Problem.unnamed(path, address) }
            return name
        }
    }

    /// Where the first constructor whose name contains `part` runs, if the program runs one.
    func position(of part: String) -> Int? { names.firstIndex { $0.contains(part) } }
}
