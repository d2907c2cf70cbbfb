@testable import BusTools
import BusProtocol
import DeviceAPI
import XCTest

/// The kind of an event the timeline counts and shows, found by one look-up of its topic: the same as comparing the
/// topic with each one the timeline knows, in order.
final class TimelineKindTests: XCTestCase {
    private func byComparing(_ envelope: Envelope) -> String? {
        switch envelope.topic {
        case DeviceTopic.scenarioStep: return "person"
        case DeviceTopic.shieldShown: return "SHIELD"
        case DeviceTopic.actionHandled: return "button"
        case DeviceTopic.shieldDismissed: return "dismissed"
        case DeviceTopic.appOpened: return "open"
        case DeviceTopic.appClosed: return "close"
        case DeviceTopic.webVisited: return "web"
        case DeviceTopic.settingsChanged: return "BLOCK or UNBLOCK"
        case _ where envelope.topic.hasPrefix("deviceactivity.") && !envelope.topic.hasSuffix(".request") && !envelope.topic.hasSuffix(".reply"):
            return "monitor"
        case DeviceTopic.notificationPosted: return "notify"
        case DeviceTopic.notificationTapped: return "tap"
        case DeviceTopic.urlOpened: return "url"
        case DeviceTopic.authorizationChanged: return "auth"
        case DeviceTopic.habitCompleted: return "habit"
        case DeviceTopic.appAction: return "in-app"
        case DeviceTopic.osUpdated, DeviceTopic.restarted: return "device"
        case "device.quirk": return "quirk"
        case Topic.clockChanged: return "clock"
        case "bus.error": return "ERROR"
        case "plugin.failed", "plugin.exited": return "plugin"
        case "report.insight", "app.unlock.started", "app.unlock.ended": return "app"
        default: return nil
        }
    }

    func testEveryTopicHasTheKindComparingItsTopicGives() {
        let topics = [
            DeviceTopic.scenarioStep, DeviceTopic.shieldShown, DeviceTopic.actionHandled, DeviceTopic.shieldDismissed,
            DeviceTopic.appOpened, DeviceTopic.appClosed, DeviceTopic.webVisited, DeviceTopic.webLeft, DeviceTopic.home,
            DeviceTopic.notificationPosted, DeviceTopic.notificationTapped, DeviceTopic.urlOpened, DeviceTopic.authorizationChanged,
            DeviceTopic.authorizationRequest, DeviceTopic.authorizationReply, DeviceTopic.habitCompleted, DeviceTopic.appAction,
            DeviceTopic.osUpdated, DeviceTopic.restarted, DeviceTopic.clockChanged, DeviceTopic.configurationRequest,
            DeviceTopic.configurationReply, DeviceTopic.actionRequest, DeviceTopic.actionReply, DeviceTopic.settingsReadRequest,
            DeviceTopic.settingsWriteReply, DeviceTopic.startMonitoringRequest, DeviceTopic.startMonitoringReply,
            DeviceTopic.stopMonitoringRequest, DeviceTopic.activitiesReply, DeviceTopic.eventsRequest, DeviceTopic.intervalDidStart,
            DeviceTopic.intervalDidEnd, DeviceTopic.intervalWillStartWarning, DeviceTopic.intervalWillEndWarning,
            DeviceTopic.eventDidReachThreshold, DeviceTopic.eventWillReachThresholdWarning, DeviceTopic.callbackDropped,
            "device.quirk", Topic.clockChanged, "clock.tick", "bus.error", "bus.ready", "bus.started", "plugin.failed", "plugin.exited",
            "plugin.up", "report.insight", "app.unlock.started", "app.unlock.ended", "deviceactivity.", "deviceactivity.x.request",
            "deviceactivity.x.replyish", "", "x", "shield.shown.extra",
        ]
        for topic in topics where topic != DeviceTopic.settingsChanged {
            let envelope = Envelope(seq: 1, time: 0, topic: topic, source: "os", body: Array("{}".utf8))
            XCTAssertEqual(Timeline.kind(of: envelope), byComparing(envelope), topic)
        }
        for body in [#"{"shield":{}}"#, #"{"shield":{"applications":["a"]}}"#, "{}"] {
            let change = Envelope(seq: 1, time: 0, topic: DeviceTopic.settingsChanged, source: "os", body: Array(body.utf8))
            XCTAssertEqual(byComparing(change), "BLOCK or UNBLOCK")
            XCTAssertEqual(Timeline.kind(of: change), body == #"{"shield":{"applications":["a"]}}"# ? "BLOCK" : "UNBLOCK", body)
        }
    }
}
