// ZeroMQ: a thin Swift wrapper over libzmq — contexts, sockets, multipart frames, polling, errors.
//
// It knows nothing of Screen Time or of ShieldBus's protocol: it moves frames of bytes.

import CZeroMQ
#if canImport(Glibc)
import Glibc
#endif

/// A frame: one part of a multipart message.
public typealias Frame = [UInt8]

/// The libzmq version this module is linked against, as "major.minor.patch".
public var libzmqVersion: String {
    var major: Int32 = 0, minor: Int32 = 0, patch: Int32 = 0
    zmq_version(&major, &minor, &patch)
    return "\(major).\(minor).\(patch)"
}

/// Retries a libzmq call while it fails with EINTR (a signal arrived), as libzmq's documentation advises.
@inline(__always)
func retryingOnInterrupt(_ call: () -> Int32) -> Int32 {
    while true {
        let rc = call()
        if rc == -1 && zmq_errno() == EINTR { continue }
        return rc
    }
}
