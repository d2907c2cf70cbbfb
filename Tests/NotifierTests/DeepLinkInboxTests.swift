import Foundation
import ReferenceKit
import ShieldBusSDK
import ShieldBusTestSupport
import XCTest

/// The companion app's inbox over a real App-Group store shared with the notifier's slice.
final class DeepLinkInboxTests: XCTestCase {
    let folder = TemporaryDirectory(prefix: "inbox")
    let group = "group.test.inbox"
    let start = Date(timeIntervalSince1970: 1_795_413_600)
    var container: AppGroupContainer { AppGroupContainer(root: URL(fileURLWithPath: folder.path)) }

    override func setUpWithError() throws {
        try container.createGroup(group)
        try container.declareSlices(group: group, ["notifier": [PendingDeepLinkRoute.key], "app": ["DeepLinkInbox.*"]])
    }

    func store(_ writer: String) throws -> SharedDefaults {
        try SharedDefaults(suiteName: group, container: container, writer: writer)
    }

    /// The notifier leaves a route created at `createdAt` that lives ten minutes.
    func leaveRoute(_ url: String = "tether://nudge?action=call", createdAt: Date) throws {
        try store("notifier").set(PendingDeepLinkRoute(route: "circle_contacts", url: url, createdAt: createdAt,
                                                       expiresAt: createdAt.addingTimeInterval(600)), forKey: PendingDeepLinkRoute.key)
    }

    func testARouteOpensOnceAndANewerOneOpensAgain() throws {
        let inbox = DeepLinkInbox(defaults: try store("app"))
        var opened: [String] = []
        XCTAssertEqual(try inbox.followPendingRoute(now: start) { opened.append($0) }, .none, "nothing written yet")
        try leaveRoute(createdAt: start)
        guard case .opened(let route) = try inbox.followPendingRoute(now: start.addingTimeInterval(60), open: { opened.append($0) }) else {
            return XCTFail("the route was not opened")
        }
        XCTAssertEqual(route.route, "circle_contacts")
        XCTAssertEqual(try inbox.followPendingRoute(now: start.addingTimeInterval(61)) { opened.append($0) }, .none)
        try leaveRoute("tether://nudge?action=text", createdAt: start.addingTimeInterval(120))
        _ = try inbox.followPendingRoute(now: start.addingTimeInterval(180)) { opened.append($0) }
        XCTAssertEqual(opened, ["tether://nudge?action=call", "tether://nudge?action=text"])
    }

    func testAnExpiredRouteIsConsumedWithoutOpening() throws {
        let inbox = DeepLinkInbox(defaults: try store("app"))
        try leaveRoute(createdAt: start)
        var opened = 0
        guard case .expired = try inbox.followPendingRoute(now: start.addingTimeInterval(600), open: { _ in opened += 1 }) else {
            return XCTFail("a route at its expiry instant is expired")
        }
        XCTAssertEqual(try inbox.followPendingRoute(now: start.addingTimeInterval(601)) { _ in opened += 1 }, .none)
        XCTAssertEqual(opened, 0)
    }

    func testAFailedOpenIsReportedAndNotRetried() throws {
        let inbox = DeepLinkInbox(defaults: try store("app"))
        try leaveRoute(createdAt: start)
        XCTAssertThrowsError(try inbox.followPendingRoute(now: start) { _ in throw PluginError.unavailableInExtension("open") }) { error in
            guard case .openFailed(let route, let reason)? = error as? DeepLinkInboxError else { return XCTFail("\(error)") }
            XCTAssertEqual(route.url, "tether://nudge?action=call")
            XCTAssertTrue(reason.contains("unavailable in app extensions"), reason)
        }
        XCTAssertEqual(try inbox.followPendingRoute(now: start) { _ in XCTFail("opened twice") }, .none)
    }

    func testAReaderWithoutItsSliceLeavesTheRoutePending() throws {
        try leaveRoute(createdAt: start)
        XCTAssertThrowsError(try DeepLinkInbox(defaults: try store("stranger")).followPendingRoute(now: start) { _ in XCTFail("opened") })
        guard case .opened = try DeepLinkInbox(defaults: try store("app")).followPendingRoute(now: start, open: { _ in }) else {
            return XCTFail("the failed attempt consumed the route")
        }
    }
}
