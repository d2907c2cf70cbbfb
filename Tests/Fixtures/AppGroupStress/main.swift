// Test fixture: writes an app group from a separate process, for AppGroupStoreTests' multi-process tests.
import AppGroupStore
import Foundation

let usage = """
    usage: appgroup-stress increment <root> <group> <writer> <key> <count>
             adds 1 to the Int at <key>, <count> times, one transaction each
           appgroup-stress hold <root> <group> <writer> <key>=<string>...
             sets each key in one transaction, prints IN-TX, then waits on stdin inside it
    """

/// Writes `text` to a file handle unbuffered, so a reading parent sees it at once.
func emit(_ text: String, to handle: FileHandle) {
    handle.write(Data((text + "\n").utf8))
}

func run(_ arguments: [String]) throws {
    guard arguments.count >= 4 else { throw ExitCode.usage }
    let container = AppGroupContainer(root: URL(fileURLWithPath: arguments[1]))
    let defaults = try SharedDefaults(suiteName: arguments[2], container: container, writer: arguments[3])
    switch (arguments[0], arguments.count) {
    case ("increment", 6):
        guard let count = Int(arguments[5]) else { throw ExitCode.usage }
        let key = arguments[4]
        for _ in 0..<count {
            try defaults.transaction { tx in
                try tx.set((try tx.integer(forKey: key) ?? 0) + 1, forKey: key)
            }
        }
    case ("hold", 5...):
        let assignments = try arguments[4...].map { argument -> (key: String, value: String) in
            guard let equals = argument.firstIndex(of: "=") else { throw ExitCode.usage }
            return (String(argument[..<equals]), String(argument[argument.index(after: equals)...]))
        }
        try defaults.transaction { tx in
            for assignment in assignments {
                try tx.set(assignment.value, forKey: assignment.key)
            }
            emit("IN-TX", to: .standardOutput)
            // The parent kills this process here, mid-transaction.
            _ = readLine()
        }
    default:
        throw ExitCode.usage
    }
}

/// Why the fixture stopped early.
enum ExitCode: Error {
    case usage
}

do {
    try run(Array(CommandLine.arguments.dropFirst()))
} catch ExitCode.usage {
    emit(usage, to: .standardError)
    exit(2)
} catch {
    emit("appgroup-stress: \(error)", to: .standardError)
    exit(1)
}
