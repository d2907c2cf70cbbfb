/// What one run of one load measured.
struct RunResult {
    let load: LoadKind
    /// Events the publisher sent.
    let published: Int
    let subscribers: [Tally]
    /// When the first event was handed to the publisher's socket (monotonic ns).
    let firstPublish: UInt64
    /// Deliveries the broker itself counted as dropped (from its status report); nil for the proxy.
    let brokerDropped: Int?
    /// CPU spent from the first publish until every subscriber was done.
    let cpu: CPUUsage

    /// From the first publish to the last arrival at any subscriber, in seconds.
    var elapsedSeconds: Double {
        let last = subscribers.map(\.lastArrival).max() ?? firstPublish
        return Double(last &- firstPublish) / 1e9
    }

    /// Events delivered to every subscriber per second: deliveries ÷ subscribers ÷ elapsed — the published events
    /// per second when nothing is lost, and no more than what actually arrived when something is.
    var eventsPerSecond: Double { Double(delivered) / Double(max(1, subscribers.count)) / elapsedSeconds }

    /// Deliveries (one event arriving at one subscriber) per second, summed over subscribers.
    var deliveriesPerSecond: Double { Double(delivered) / elapsedSeconds }

    var delivered: Int { subscribers.reduce(0) { $0 + $1.received } }
    var missing: Int { subscribers.reduce(0) { $0 + $1.missing } }
    var outOfOrder: Int { subscribers.reduce(0) { $0 + $1.outOfOrder } }
    var seqGaps: Int { subscribers.reduce(0) { $0 + $1.seqGaps } }

    /// Each subscriber's own rate: its arrivals over the time from the first publish to its last arrival.
    var perSubscriberRates: [Double] {
        subscribers.map { Double($0.received) / (Double($0.lastArrival &- firstPublish) / 1e9) }
    }

    /// Whether every subscriber got every event, in order, and nothing was dropped anywhere.
    var isComplete: Bool {
        missing == 0 && outOfOrder == 0 && seqGaps == 0 && (brokerDropped ?? 0) == 0
            && subscribers.allSatisfy { $0.received == published }
    }
}

/// A load the benchmark can run: it sets everything up, sends `events` events, and tears everything down.
protocol Load {
    var kind: LoadKind { get }
    func run(events: Int, index: Int) throws -> RunResult
}

/// What every load shares: the body size, the subscriber count, where sockets go, the queue limits.
struct LoadShape {
    /// The topic every event is published on (a namespace the broker lets plugins publish into).
    static let topic = "app.bench"
    let subscribers: Int
    let bodies: BodyMaker
    /// A private temporary folder for the ipc:// socket files.
    let directory: String
    /// Every queue (publisher, proxy or broker, subscriber) holds this many messages: more than a whole
    /// run, so no queue ever fills and nothing is dropped for lack of room.
    let highWaterMark: Int32
    /// A subscriber that hears nothing for this long gives up and reports what is missing.
    let idleTimeoutNanoseconds: UInt64 = 5_000_000_000
}
