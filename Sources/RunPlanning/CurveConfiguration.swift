import Broker
import BusClient
import Configuration
import ZeroMQ

extension CurveAdmission {
    /// The configuration's `bus.curve`: the broker's key pair (a fresh one each run when none is named) and the
    /// allowlist. A file that cannot be read, or is no certificate, is an error naming the configuration's line.
    public init(configuration: ShieldBusConfiguration) throws {
        let section = configuration.bus.curve
        let file = configuration.file
        func certificate(_ reference: ShieldBusConfiguration.Reference, needSecret: Bool) throws -> CurveCertificate {
            do {
                return try CurveCertificate.read(path: configuration.resolve(reference.value), needSecret: needSecret)
            } catch let error as CurveCertificate.ReadError {
                throw reference.error("\(error)", file: file)
            }
        }
        let serverKeys: CurveKeyPair
        if let reference = section.serverKey {
            guard let pair = try certificate(reference, needSecret: true).keyPair else {
                throw reference.error("the certificate holds no secret key", file: file)
            }
            serverKeys = pair
        } else {
            serverKeys = try CurveKeyPair.generate()
        }
        var allowed: [String: String] = [:]
        for reference in section.allow {
            if Curve.isTextKey(reference.value) {
                allowed[reference.value] = "key \(reference.value.prefix(8))…"
            } else {
                allowed[try certificate(reference, needSecret: false).publicKey] = reference.value
            }
        }
        self.init(serverKeys: serverKeys, allowedClients: allowed)
    }
}
