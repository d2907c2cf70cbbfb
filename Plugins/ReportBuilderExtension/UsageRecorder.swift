import BusProtocol
import Foundation
import ReferenceKit
import ShieldBusSDK
import SortedJSON
import UsageReports

/// Turns the OS's activity events, as they happen, into usage records: spans of app and web use, pickups, shield
/// encounters, notifications, grace passes and nudges.
///
/// - A span runs from `activity.app.opened` / `activity.web.visited` to the matching `closed` / `left`, or to a
///   device restart, an iOS update (which stop the OS's own usage meter too) or a broker's start-up `bus.ready`
///   (a killed broker's screen is gone).
/// - A pickup is an app coming to the screen from the home screen (nothing in use before it), or from under the
///   shield that came up when it was opened from the home screen; switching straight from one app, page, shield or
///   OS web view to an app is not a new pickup.
/// - A shield encounter is a shield coming up over a target; the same shield drawn again (a deferred press, a store
///   change, the OS redrawing it after a ManagedSettings change or an iOS update) is the same encounter.
/// - Private tabs (`isPrivate`) are ignored entirely, as `suppressUsageRecording` asks: they change nothing.
///
/// Codable, so the report builder keeps it in its App-Group slice: a new process (after a crash, a device
/// restart or a short stop) goes on with the span in progress instead of losing it.
struct UsageRecorder: Codable, Equatable {
    /// What is in use.
    enum Subject: Codable, Equatable {
        case app(name: String, category: String)
        case web(domain: String)
    }

    /// Where the person is coming from, for pickups.
    enum Origin: Codable, Equatable {
        /// The home screen: nothing on screen.
        case home
        /// A shield drawn over this app, opened from the home screen: the app coming out from under it is the pickup.
        case shieldedFromHome(app: String)
        /// Anything else on screen: an app, a page, another shield or the OS's web view.
        case away
    }

    /// `shield.dismissed` reasons of the OS drawing what is on screen anew, not of the person leaving it.
    static let redrawReasons: Set<String> = ["managed-settings", "os-update"]

    struct Span: Codable, Equatable {
        var subject: Subject
        var since: Date
    }

    private(set) var inUse: Span?
    private var origin = Origin.home
    private var shieldedTarget: String?

    /// The records an event makes; `now` is its bus time.
    mutating func records(for envelope: Envelope, at now: Date) -> [UsageRecord] {
        switch envelope.topic {
        case DeviceTopic.appOpened:
            guard let activity = decode(AppActivity.self, envelope, reading: AppActivity.init(body:)) else { return [] }
            let name = activity.application.localizedDisplayName ?? "Unknown app"
            var records = close(at: now)
            if origin == .home || origin == .shieldedFromHome(app: name) { records.append(.pickup(app: name, at: now)) }
            origin = .away
            shieldedTarget = nil
            inUse = Span(subject: .app(name: name, category: activity.category?.localizedDisplayName ?? "Other"), since: now)
            return records
        case DeviceTopic.appClosed:
            guard let activity = decode(AppActivity.self, envelope, reading: AppActivity.init(body:)), case .app(let name, _)? = inUse?.subject,
                  name == (activity.application.localizedDisplayName ?? "Unknown app") else { return [] }
            return close(at: now)
        case DeviceTopic.webVisited:
            guard let activity = decode(WebActivity.self, envelope, reading: WebActivity.init(body:)), !activity.isPrivate else { return [] }
            let records = close(at: now)
            origin = .away
            shieldedTarget = nil
            inUse = Span(subject: .web(domain: activity.webDomain.domain ?? "unknown"), since: now)
            return records
        case DeviceTopic.webLeft:
            guard let activity = decode(WebActivity.self, envelope, reading: WebActivity.init(body:)), !activity.isPrivate,
                  inUse?.subject == .web(domain: activity.webDomain.domain ?? "unknown") else { return [] }
            return close(at: now)
        case DeviceTopic.home, DeviceTopic.restarted:
            origin = .home
            shieldedTarget = nil
            return close(at: now)
        case DeviceTopic.osUpdated:
            return close(at: now)
        case DeviceTopic.shieldShown:
            guard let shown = decode(ShieldShown.self, envelope, reading: ShieldShown.init(body:)) else { return [] }
            if origin == .home {
                origin = shown.target.application.map { .shieldedFromHome(app: $0.localizedDisplayName ?? "Unknown app") } ?? .away
            }
            guard shown.target.displayName != shieldedTarget else { return [] }
            shieldedTarget = shown.target.displayName
            return [.shieldEncounter(target: shown.target.displayName, at: now)]
        case DeviceTopic.shieldDismissed:
            if !Self.redrawReasons.contains(envelope.bodyValue["reason"]?.stringValue ?? "") { shieldedTarget = nil }
            return []
        case DeviceTopic.notificationPosted:
            guard let notification = decode(NotificationRequest.self, envelope, reading: NotificationRequest.init(body:)) else { return [] }
            return [.notification(source: notification.kind ?? notification.title, at: now)]
        case IntentTopic.gracePass:
            return [.gracePassUsed(at: now)]
        case IntentTopic.nudge:
            return [.nudgeUsed(at: now)]
        default:
            return []
        }
    }

    /// The use in progress up to `now`, which goes on from `now`: at midnight, so the finished day is complete.
    mutating func checkpoint(at now: Date) -> [UsageRecord] {
        guard let subject = inUse?.subject else { return [] }
        let records = close(at: now)
        inUse = Span(subject: subject, since: now)
        return records
    }

    /// The use in progress up to `now`, without ending it: for reports asked for in the middle of a span.
    func inProgress(at now: Date) -> UsageRecord? {
        inUse.map { Self.record($0.subject, from: $0.since, to: now) }
    }

    /// Ends the use in progress at `now` (also when a broker starts afresh: a killed broker's screen is gone).
    /// Where the person comes from is kept, as across a crash the broker plays in-process.
    mutating func close(at now: Date) -> [UsageRecord] {
        guard let span = inUse else { return [] }
        inUse = nil
        return [Self.record(span.subject, from: span.since, to: now)]
    }

    private static func record(_ subject: Subject, from start: Date, to end: Date) -> UsageRecord {
        switch subject {
        case let .app(name, category): return .appUsage(app: name, category: category, start: start, end: end)
        case .web(let domain): return .webUsage(domain: domain, start: start, end: end, isPrivate: false)
        }
    }

    /// The body read by `reading` (`BodyReading`: every open and visit makes these), else decoded, which says what is wrong.
    private func decode<T: Decodable>(_ type: T.Type, _ envelope: Envelope, reading: ((JSONValue) -> T?)? = nil) -> T? {
        if let reading, let body = try? JSONValue(parsing: envelope.body), let read = reading(body) { return read }
        do {
            return try DeviceAPICoding.decode(type, from: envelope.body)
        } catch {
            PluginRuntime.current?.logger.error("\(envelope.topic) #\(envelope.seq) is not a valid \(type): \(error)")
            return nil
        }
    }
}

/// The recorder as `SortedJSONEncoder` writes it, byte by byte: it is stored at every event that moves it
/// (`StoredDayWritingTests` compares the two).
extension UsageRecorder: StoredJSONWritable {
    var storedJSON: [UInt8]? {
        var out: [UInt8] = []
        out.reserveCapacity(160)
        out.append(UInt8(ascii: "{"))
        if let inUse {
            out.append(contentsOf: #""inUse":{"since":"#.utf8)
            guard SortedJSONEncoder.writeNumber(inUse.since.timeIntervalSince1970, into: &out) else { return nil }
            switch inUse.subject {
            case let .app(name, category):
                out.append(contentsOf: #","subject":{"app":{"category":"#.utf8)
                JSONWriter.writeString(category, into: &out)
                out.append(contentsOf: #","name":"#.utf8)
                JSONWriter.writeString(name, into: &out)
            case .web(let domain):
                out.append(contentsOf: #","subject":{"web":{"domain":"#.utf8)
                JSONWriter.writeString(domain, into: &out)
            }
            out.append(contentsOf: "}}},".utf8)
        }
        switch origin {
        case .home:
            out.append(contentsOf: #""origin":{"home":{}}"#.utf8)
        case .shieldedFromHome(let app):
            out.append(contentsOf: #""origin":{"shieldedFromHome":{"app":"#.utf8)
            JSONWriter.writeString(app, into: &out)
            out.append(contentsOf: "}}".utf8)
        case .away:
            out.append(contentsOf: #""origin":{"away":{}}"#.utf8)
        }
        if let shieldedTarget {
            out.append(contentsOf: #","shieldedTarget":"#.utf8)
            JSONWriter.writeString(shieldedTarget, into: &out)
        }
        out.append(UInt8(ascii: "}"))
        return out
    }
}
