// fixture-outsider: what another local user (or a client without credentials) can get from a broker — run by the
// transport security tests, often as `nobody`. Prints one line per attempt; the exit status is 0 when every attempt
// was refused and 1 when any got through.
//
//   fixture-outsider --endpoint E [--wait-ms N] [--read PATH ...]
//     --endpoint: a plain DEALER (no CURVE) sends `status` and waits up to N ms (default 2000) for any answer
//     --read: tries to open each file (or list each folder)

import Foundation
import ZeroMQ

var endpoint: String?
var waitMilliseconds = 2000
var reads: [String] = []
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    switch argument {
    case "--endpoint": endpoint = arguments.popFirst()
    case "--wait-ms": waitMilliseconds = arguments.popFirst().flatMap { Int($0) } ?? waitMilliseconds
    case "--read": reads.append(contentsOf: arguments); arguments = []
    default: FileHandle.standardError.write(Data("unknown argument \(argument)\n".utf8)); exit(2)
    }
}

var gotThrough = false
for path in reads {
    var info = stat()
    let isFolder = stat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR
    let opened = isFolder ? opendir(path).map { closedir($0); return true } ?? false : { () -> Bool in
        let descriptor = open(path, O_RDONLY)
        if descriptor >= 0 { close(descriptor); return true }
        return false
    }()
    let why = opened ? "" : String(cString: strerror(errno))
    print(opened ? "read \(path)" : "refused \(path): \(why)")
    if opened { gotThrough = true }
}

if let endpoint {
    do {
        let context = try Context()
        let socket = try Socket(context, .dealer)
        try socket.setLinger(milliseconds: 0)
        try socket.connect(endpoint)
        try socket.send([Array("status".utf8), Array(#"{"v":1}"#.utf8)], dontWait: true)
        var poller = Poller()
        try poller.addReadable(socket)
        let answered = try poller.poll(timeoutMilliseconds: waitMilliseconds)[0]
        print(answered ? "answered \(endpoint)" : "no answer from \(endpoint) within \(waitMilliseconds) ms")
        if answered { gotThrough = true }
    } catch {
        print("refused \(endpoint): \(error)")
    }
}
exit(gotThrough ? 1 : 0)
