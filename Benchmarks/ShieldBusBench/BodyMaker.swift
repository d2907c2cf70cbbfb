/// Event bodies: JSON objects of an exact size that carry the event's number, identical for every load.
///
/// The number lets a proxy subscriber (which has no sequence numbers) find missing or reordered events;
/// the padding keeps every body exactly `bytes` long whatever the number's width.
struct BodyMaker {
    static let minimumBytes = 64
    let bytes: Int

    private static let head = #"{"app":"com.example.bench","n":"#

    /// `{"app":"com.example.bench","n":<number>,"pad":"xxx…"}`, exactly `bytes` long.
    func body(number: Int) -> [UInt8] {
        let head = BodyMaker.head + "\(number)" + #","pad":""#
        let tail = #""}"#
        let padding = bytes - head.utf8.count - tail.utf8.count
        precondition(padding >= 0, "body too small for its number")
        var out: [UInt8] = []
        out.reserveCapacity(bytes)
        out.append(contentsOf: head.utf8)
        out.append(contentsOf: repeatElement(UInt8(ascii: "x"), count: padding))
        out.append(contentsOf: tail.utf8)
        return out
    }

    /// All bodies of a run, made before the clock starts so the publisher only sends.
    func bodies(count: Int) -> [[UInt8]] { (0..<count).map { body(number: $0) } }

    private static let headBytes = Array(head.utf8)

    /// The number in a body made by `body(number:)`, read at its known offset — as cheaply as a counter can be
    /// read, so that the proxy's subscribers do no more work per event than the broker's lean ones.
    static func number(in body: [UInt8]) -> Int? {
        guard body.count > headBytes.count, body.starts(with: headBytes) else { return nil }
        var value = 0
        var index = headBytes.count
        while index < body.count, body[index] >= 0x30, body[index] <= 0x39 {
            value = value * 10 + Int(body[index] - 0x30)
            index += 1
        }
        return index > headBytes.count ? value : nil
    }
}
