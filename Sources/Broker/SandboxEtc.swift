import BusClient
import Foundation

/// The sandbox's `/etc`, and its `/sys`: what of the host's a plugin needs, gathered once per run into folders of the
/// runtime folder and mounted as one each. bubblewrap reads the mount table again at every mount it makes, so a
/// sandbox costs more the more mounts it has; a bind mount per file made `/etc` a third of a sandbox's cost. The copies
/// are the host's as the run starts.
struct SandboxEtc: Equatable {
    /// Files copied as they are: the loader's cache (where the shared libraries are), the names of users and groups
    /// and how to look them up, the zone name, names on the network, OpenSSL's settings.
    /// (`ld.so.conf` and its folder are for `ldconfig`, not the loader: not given.)
    static let copiedFiles = ["ld.so.cache", "timezone", "passwd", "group", "nsswitch.conf", "hosts", "resolv.conf", "ssl/openssl.cnf"]
    /// Links made again as they are: `/etc/localtime` names a zone file in /usr, which the sandbox has.
    static let copiedLinks = ["localtime"]
    /// Folders mounted over their place in the view, each one mount: the TLS certificates (never `/etc/ssl/private`,
    /// the host's keys), ca-certificates' settings, and the alternatives' links into /usr.
    static let boundFolders = ["ssl/certs", "ca-certificates", "alternatives"]

    /// The view's folder (mounted read-only as the sandbox's /etc).
    let path: String
    /// The host's /etc.
    let hostEtc: String
    /// The folders mounted over their place in the view: those of `boundFolders` the host has.
    let folders: [String]
    /// The sandbox's /sys (mounted read-only): copies of the processor counts (`PluginSandbox.processorCountFiles`),
    /// one mount for both; nil when the host has neither.
    let systemPath: String?

    /// Gathers the view into `<runtime>/sandbox-etc`, afresh, with an empty place for each of `given` (the host's
    /// paths under /etc that a plugin's `readable:` or `writable:` names): bwrap mounts them over the read-only view,
    /// and cannot make a place for one there itself.
    /// The processor counts are copied from `hostSystem` into `<runtime>/sandbox-sys`, afresh too — unless one of
    /// `given` is under `hostSystem`: bwrap could not make its place in that read-only mount, so each count is then a
    /// bind of its own on the sandbox's root, as without a view.
    static func make(in runtimeDirectory: String, hostEtc: String = "/etc", given: [String] = [], hostSystem: String = "/sys") throws -> SandboxEtc {
        let path = runtimeDirectory + "/sandbox-etc"
        let files = FileManager.default
        if files.fileExists(atPath: path) { try files.removeItem(atPath: path) }
        try files.createDirectory(atPath: path, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o755])
        // Written in place, not through a file renamed there and flushed to the disk: the folder is made afresh.
        func copy(_ bytes: Data, to file: String) throws { try PrivateFile.write(bytes: [UInt8](bytes), to: file, mode: 0o644) }
        func folder(of name: String) throws {
            guard let slash = name.lastIndex(of: "/") else { return }
            try files.createDirectory(atPath: path + "/" + name[..<slash], withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        }
        for name in copiedFiles {
            guard var bytes = files.contents(atPath: hostEtc + "/" + name) else { continue }  // absent, or unreadable: not given
            if name == "nsswitch.conf" { bytes = Data(servicesAnswerable(inside: String(decoding: bytes, as: UTF8.self)).utf8) }
            try folder(of: name)
            try copy(bytes, to: path + "/" + name)
        }
        for name in copiedLinks {
            if let target = try? files.destinationOfSymbolicLink(atPath: hostEtc + "/" + name) {
                try files.createSymbolicLink(atPath: path + "/" + name, withDestinationPath: target)
            } else if let bytes = files.contents(atPath: hostEtc + "/" + name) {
                try copy(bytes, to: path + "/" + name)
            }
        }
        var folders: [String] = []
        for name in boundFolders {
            var isFolder: ObjCBool = false
            guard files.fileExists(atPath: hostEtc + "/" + name, isDirectory: &isFolder), isFolder.boolValue else { continue }
            try files.createDirectory(atPath: path + "/" + name, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
            folders.append(name)
        }
        for host in given where host.hasPrefix(hostEtc + "/") {
            let name = String(host.dropFirst(hostEtc.count + 1))
            var isFolder: ObjCBool = false
            guard !name.isEmpty, files.fileExists(atPath: host, isDirectory: &isFolder), !files.fileExists(atPath: path + "/" + name) else { continue }
            try folder(of: name)
            if isFolder.boolValue {
                try files.createDirectory(atPath: path + "/" + name, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
            } else {
                try copy(Data(), to: path + "/" + name)
            }
        }
        return SandboxEtc(path: path, hostEtc: hostEtc, folders: folders,
                          systemPath: try makeSystem(in: runtimeDirectory + "/sandbox-sys", from: hostSystem,
                                                     given: given.contains { $0 == hostSystem || $0.hasPrefix(hostSystem + "/") }))
    }

    /// Copies the processor counts of `hostSystem` into `path`, at their places under it; nil when it has neither, or
    /// when a plugin is `given` a path under it (no copies made).
    /// They are what glibc and libdispatch read at a process's start, and a run's plugins start with it.
    private static func makeSystem(in path: String, from hostSystem: String, given: Bool) throws -> String? {
        let files = FileManager.default
        if files.fileExists(atPath: path) { try files.removeItem(atPath: path) }
        guard !given else { return nil }
        var copied = false
        for file in PluginSandbox.processorCountFiles {
            let name = String(file.dropFirst("/sys/".count))
            guard let bytes = files.contents(atPath: hostSystem + "/" + name), let slash = name.lastIndex(of: "/") else { continue }
            try files.createDirectory(atPath: path + "/" + name[..<slash], withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
            try PrivateFile.write(bytes: [UInt8](bytes), to: path + "/" + name, mode: 0o644)
            copied = true
        }
        return copied ? path : nil
    }

    /// The name services that can answer inside a sandbox: those reading its /etc (`files`, `compat`), `dns`, and
    /// `myhostname` (the machine's own name, from the kernel). Others read what it does not show (`db` reads /var;
    /// `systemd`, `mdns*`, `sss`, `cache` ask daemons over sockets in /run or /var), and glibc would try to load each
    /// one's library at a database's first look-up in every process — libzmq looks up the `pgm` protocol at every
    /// context's start.
    static let answerableServices: Set<String> = ["files", "compat", "dns", "myhostname"]

    /// The host's nsswitch.conf with only the services that can answer inside the sandbox (`answerableServices`), each
    /// with its `[STATUS=action]` items; a database left with none is dropped (glibc then uses its default, `files`).
    static func servicesAnswerable(inside text: String) -> String {
        var lines: [String] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let content = line.prefix { $0 != "#" }
            guard let colon = content.firstIndex(of: ":") else {
                lines.append(String(line))
                continue
            }
            var kept: [Substring] = [], keeping = false, inAction = false
            // `files[NOTFOUND=return]`, without a space, is a service and its action.
            // By hand: Foundation's `replacingOccurrences` bridges the text to NSString, at every run's start.
            var spaced = ""
            for character in content[content.index(after: colon)...] {
                if character == "[" { spaced.append(" ") }
                spaced.append(character)
            }
            for word in spaced.split(whereSeparator: { $0 == " " || $0 == "\t" }) {
                if word.hasPrefix("[") { inAction = true }
                if !inAction { keeping = answerableServices.contains(String(word)) }
                if keeping { kept.append(word) }
                if inAction && word.hasSuffix("]") { inAction = false }
            }
            if !kept.isEmpty { lines.append(content[...colon] + " " + kept.joined(separator: " ")) }
        }
        return lines.joined(separator: "\n")
    }

    /// The bwrap arguments that make it the sandbox's /etc.
    var arguments: [String] {
        ["--ro-bind", path, "/etc"] + folders.flatMap { ["--ro-bind-try", hostEtc + "/" + $0, "/etc/" + $0] }
    }

    /// The bwrap arguments that make the sandbox's /sys: the processor counts only — the view, or each host file
    /// bound at its place when there is no view (those the host lacks are left out by bwrap).
    var systemArguments: [String] {
        systemPath.map { ["--ro-bind", $0, "/sys"] } ?? Self.systemFileArguments
    }

    /// The processor counts bound one by one, read-only.
    static let systemFileArguments = PluginSandbox.processorCountFiles.flatMap { ["--ro-bind-try", $0, $0] }
}
