// `shieldbus keys new`: a CURVE key pair for the tcp bus — the broker's own, or a client's for the allowlist.
import ArgumentParser
import BusClient
import BusProtocol
import Foundation
import ZeroMQ

extension ShieldBus {
    struct Keys: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "keys", abstract: "Make CURVE keys for a broker on tcp.", subcommands: [New.self])
    }
}

extension ShieldBus.Keys {
    struct New: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "new",
            abstract: "Make a CURVE key pair: NAME.key (public) and NAME.key_secret (secret, mode 0600).",
            discussion: """
            A broker on tcp admits only clients whose public key is on its allowlist. For a client (a plugin \
            under development, a tool on another account of yours): make its pair, name NAME.key in the \
            configuration's `bus.curve.allow`, and give the client NAME.key_secret (the Swift SDK reads the file \
            in SHIELDBUS_CLIENT_KEY; Python: zmq.auth.load_certificate). For the broker itself: name \
            NAME.key_secret in `bus.curve.serverKey` (without it, the broker makes a fresh key each run).

            The files use pyzmq's certificate format. Existing files are never overwritten.
            """
        )

        @Argument(help: "The key's name: lowercase letters, digits and '-'.")
        var name: String

        @Option(name: .long, help: ArgumentHelp("Where to write the two files.", valueName: "dir"))
        var directory = "."

        @Flag(name: .long, help: "Print the paths and the public key as JSON.")
        var json = false

        func validate() throws {
            guard (1...64).contains(name.utf8.count), name.utf8.allSatisfy({ (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x2D }) else {
                throw ValidationError("the key's name must be 1 to 64 lowercase letters, digits or '-', not '\(name)'")
            }
        }

        func run() throws {
            guard Curve.isAvailable else {
                throw CommandFailure("this libzmq (\(libzmqVersion)) was built without CURVE (zmq_has(\"curve\") is false); install one built with libsodium")
            }
            for suffix in [".key", ".key_secret"] where FileManager.default.fileExists(atPath: "\(directory)/\(name)\(suffix)") {
                throw CommandFailure("\(directory)/\(name)\(suffix) exists already; choose another name or remove it first")
            }
            let certificate = CurveCertificate(try CurveKeyPair.generate())
            let paths = try certificate.write(directory: directory, name: name)
            if json {
                print(JSONValue.object(["public": .string(paths.publicPath), "secret": .string(paths.secretPath ?? ""),
                                        "publicKey": .string(certificate.publicKey)]).jsonText)
            } else {
                print("public key \(certificate.publicKey)")
                print("wrote \(paths.publicPath) (public: put it in bus.curve.allow) and \(paths.secretPath ?? "") (secret, 0600: give it only to the client)")
            }
        }
    }
}
