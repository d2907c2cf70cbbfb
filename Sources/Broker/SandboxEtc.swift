import Foundation

/// The sandbox's `/etc`: what of the host's a plugin needs, gathered once per run into a folder of the runtime folder
/// and mounted as one. bubblewrap reads the mount table again at every mount it makes, so a sandbox costs more the more
/// mounts it has; a bind mount per file made `/etc` a third of a sandbox's cost. The copies are the host's as the run
/// starts.
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

    /// Gathers the view into `<runtime>/sandbox-etc`, afresh, with an empty place for each of `given` (the host's
    /// paths under /etc that a plugin's `readable:` or `writable:` names): bwrap mounts them over the read-only view,
    /// and cannot make a place for one there itself.
    static func make(in runtimeDirectory: String, hostEtc: String = "/etc", given: [String] = []) throws -> SandboxEtc {
        let path = runtimeDirectory + "/sandbox-etc"
        let files = FileManager.default
        if files.fileExists(atPath: path) { try files.removeItem(atPath: path) }
        try files.createDirectory(atPath: path, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o755])
        func folder(of name: String) throws {
            guard let slash = name.lastIndex(of: "/") else { return }
            try files.createDirectory(atPath: path + "/" + name[..<slash], withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        }
        for name in copiedFiles {
            guard let bytes = files.contents(atPath: hostEtc + "/" + name) else { continue }  // absent, or unreadable: not given
            try folder(of: name)
            guard files.createFile(atPath: path + "/" + name, contents: bytes, attributes: [.posixPermissions: 0o644]) else {
                throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path + "/" + name])
            }
        }
        for name in copiedLinks {
            if let target = try? files.destinationOfSymbolicLink(atPath: hostEtc + "/" + name) {
                try files.createSymbolicLink(atPath: path + "/" + name, withDestinationPath: target)
            } else if let bytes = files.contents(atPath: hostEtc + "/" + name) {
                _ = files.createFile(atPath: path + "/" + name, contents: bytes, attributes: [.posixPermissions: 0o644])
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
                _ = files.createFile(atPath: path + "/" + name, contents: nil, attributes: [.posixPermissions: 0o644])
            }
        }
        return SandboxEtc(path: path, hostEtc: hostEtc, folders: folders)
    }

    /// The bwrap arguments that make it the sandbox's /etc.
    var arguments: [String] {
        ["--ro-bind", path, "/etc"] + folders.flatMap { ["--ro-bind-try", hostEtc + "/" + $0, "/etc/" + $0] }
    }
}
