import BusProtocol
import DeviceAPI
import ScreenTime
import XCTest

/// The bodies read with BusProtocol's JSON reader (`BodyReading`: a shield configuration request and its reply,
/// `shield.shown`, `activity.app.*`, `activity.web.*`, a posted notification, the monitored events' request): each
/// finds what `JSONDecoder` found, and reads nothing from what `JSONDecoder` refused (which then decodes it, and says why).
final class BodyReadingTests: XCTestCase {
    func testItReadsWhatTheOSWrites() throws {
        let app = Application(token: ApplicationToken(rawValue: "app-7f3a"), localizedDisplayName: "Instagram")
        let category = ActivityCategory(token: ActivityCategoryToken(rawValue: "cat-social"), localizedDisplayName: "Social")
        let requests = [
            ShieldConfigurationRequest(entryPoint: .application, target: ShieldTarget(application: app)),
            ShieldConfigurationRequest(entryPoint: .applicationInCategory, target: ShieldTarget(application: app, category: category)),
            ShieldConfigurationRequest(entryPoint: .webDomain, target: ShieldTarget(webDomain: WebDomain(token: WebDomainToken(rawValue: "web-1"), domain: "reddit.com"))),
            ShieldConfigurationRequest(entryPoint: .webDomainInCategory, target: ShieldTarget(webDomain: WebDomain(domain: "x.com"), category: ActivityCategory(token: nil))),
            ShieldConfigurationRequest(entryPoint: .application, target: ShieldTarget(application: Application(token: nil, localizedDisplayName: "Ünïcode \"q\"", bundleIdentifier: "com.example"))),
            ShieldConfigurationRequest(entryPoint: .application, target: ShieldTarget()),
        ]
        for request in requests {
            XCTAssertEqual(ShieldConfigurationRequest(body: try JSONValue(parsing: DeviceAPICoding.encode(request))), request)
        }
    }

    func testItReadsNothingFromWhatJSONDecoderRefusedAndTheSameFromWhatItTook() throws {
        let bodies = [
            #"{"entryPoint":"application","target":{"application":{"token":"a","extra":[1]},"more":2},"x":null}"#,
            #"{"entryPoint":"application","target":{"application":null,"webDomain":null,"category":null}}"#,
            #"{"entryPoint":"application","target":{"application":{"token":null,"localizedDisplayName":null}}}"#,
            #"{"entryPoint":"application","target":{}}"#,
            #"{"entryPoint":"application"}"#, #"{"target":{}}"#, #"{"entryPoint":"sideways","target":{}}"#,
            #"{"entryPoint":3,"target":{}}"#, #"{"entryPoint":"application","target":[]}"#,
            #"{"entryPoint":"application","target":{"application":"a"}}"#,
            #"{"entryPoint":"application","target":{"application":{"token":5}}}"#,
            #"{"entryPoint":"webDomain","target":{"webDomain":{"domain":false}}}"#,
            #"{"entryPoint":"application","target":{"category":{"localizedDisplayName":[]}}}"#,
            #"{"entryPoint":"application","target":{"application":{"bundleIdentifier":{}}}}"#, #"[]"#, #"null"#,
        ]
        for body in bodies {
            let decoded = try? DeviceAPICoding.decode(ShieldConfigurationRequest.self, from: Array(body.utf8))
            XCTAssertEqual(ShieldConfigurationRequest(body: try JSONValue(parsing: body)), decoded, body)
        }
    }

    /// The events request reads what plugins send (no events) as `JSONDecoder` does, nothing from what it refused,
    /// and leaves a request with events to it.
    func testTheEventsRequestReadsWhatPluginsSendAndNothingJSONDecoderRefused() throws {
        let sent = MonitoredEvents(activity: DeviceActivityName("habit-lock.selection"))
        XCTAssertEqual(MonitoredEvents(body: try JSONValue(parsing: DeviceAPICoding.encode(sent))), sent)
        let bodies = [
            #"{"activity":"a","events":{}}"#, #"{"events":{},"activity":"a","extra":[1]}"#, #"{"activity":"a"}"#,
            #"{"activity":"a","events":null}"#, #"{"activity":"a","events":[]}"#, #"{"activity":null,"events":{}}"#,
            #"{"activity":3,"events":{}}"#, #"{"events":{}}"#, #"[]"#, #"null"#,
        ]
        for body in bodies {
            let decoded = try? DeviceAPICoding.decode(MonitoredEvents.self, from: Array(body.utf8))
            XCTAssertEqual(MonitoredEvents(body: try JSONValue(parsing: body)), decoded, body)
        }
        let withEvents = #"{"activity":"a","events":{"e":{"applications":[],"categories":[],"webDomains":[],"threshold":{"minute":5},"includesPastActivity":false}}}"#
        XCTAssertNotNil(try DeviceAPICoding.decode(MonitoredEvents.self, from: Array(withEvents.utf8)), "the body is a good one")
        XCTAssertNil(MonitoredEvents(body: try JSONValue(parsing: withEvents)), "a request with events is JSONDecoder's to read")
    }

    func testTheReplyReadsWhatARendererWrites() throws {
        let configurations = [
            ShieldConfiguration(),
            ShieldConfiguration.default,
            ShieldConfiguration(backgroundBlurStyle: .dark, backgroundColor: ShieldColor(1, 2, 3, 4), icon: ShieldIcon(systemName: "hourglass"),
                                title: .init(text: "Not now \u{1F600}", color: .white), subtitle: .init(text: "", color: .black),
                                primaryButtonLabel: .init(text: "OK", color: .systemRed), primaryButtonBackgroundColor: .systemBlue,
                                secondaryButtonLabel: .init(text: "Earn it", color: .darkGray)),
        ]
        for configuration in configurations {
            let reply = ShieldConfigurationReply(configuration: configuration)
            XCTAssertEqual(ShieldConfigurationReply(body: try JSONValue(parsing: DeviceAPICoding.encode(reply))), reply)
        }
    }

    func testTheReplyReadsNothingFromWhatJSONDecoderRefusedAndTheSameFromWhatItTook() throws {
        let bodies = [
            #"{"configuration":{},"extra":1}"#, #"{"configuration":{"title":null,"icon":null,"more":[]}}"#,
            ##"{"configuration":{"backgroundColor":"#FFFFFF"}}"##, ##"{"configuration":{"backgroundColor":"#ffffff80"}}"##,
            #"{"configuration":{"backgroundColor":"white"}}"#, #"{"configuration":{"backgroundColor":7}}"#,
            #"{"configuration":{"backgroundBlurStyle":"dark"}}"#, #"{"configuration":{"backgroundBlurStyle":"murky"}}"#,
            #"{"configuration":{"title":{"text":"a"}}}"#, ##"{"configuration":{"title":{"color":"#000000"}}}"##,
            ##"{"configuration":{"title":{"text":1,"color":"#000000"}}}"##, #"{"configuration":{"title":"a"}}"#,
            ##"{"configuration":{"secondaryButtonLabel":{"text":"b","color":"#00000G"}}}"##, #"{"configuration":{"icon":3}}"#,
            #"{"configuration":[]}"#, #"{"configuration":null}"#, #"{}"#, #"[]"#,
        ]
        for body in bodies {
            let decoded = try? DeviceAPICoding.decode(ShieldConfigurationReply.self, from: Array(body.utf8))
            XCTAssertEqual(ShieldConfigurationReply(body: try JSONValue(parsing: body)), decoded, body)
        }
    }

    func testShieldShownAndAppActivityReadWhatTheOSWrites() throws {
        let app = Application(token: ApplicationToken(rawValue: "app-1"), localizedDisplayName: "Instagram")
        let category = ActivityCategory(token: ActivityCategoryToken(rawValue: "cat-1"), localizedDisplayName: "Social")
        let shown = [
            ShieldShown(target: ShieldTarget(application: app, category: category), entryPoint: .applicationInCategory, stores: ["habit-lock", "b"],
                        configuration: .default, renderedBy: "shield"),
            ShieldShown(target: ShieldTarget(webDomain: WebDomain(domain: "x.com")), entryPoint: .webDomain, stores: [],
                        configuration: ShieldConfiguration(), renderedBy: "system", fallbackReason: "renderer-timeout", tab: 3, isPrivate: true),
        ]
        for body in shown {
            XCTAssertEqual(ShieldShown(body: try JSONValue(parsing: DeviceAPICoding.encode(body))), body)
        }
        for activity in [AppActivity(application: app, category: category, reason: "user"), AppActivity(application: Application(token: nil), category: nil, reason: "")] {
            XCTAssertEqual(AppActivity(body: try JSONValue(parsing: DeviceAPICoding.encode(activity))), activity)
        }
    }

    func testShieldShownAndAppActivityReadNothingFromWhatJSONDecoderRefusedAndTheSameFromWhatItTook() throws {
        let shown = #"{"configuration":{},"entryPoint":"application","renderedBy":"shield","stores":["a"],"target":{}"#
        let shownBodies = [
            shown + "}", shown + #","tab":null,"isPrivate":null,"fallbackReason":null}"#, shown + #","tab":2,"isPrivate":false,"x":1}"#,
            shown + #","tab":2.5}"#, shown + #","tab":"2"}"#, shown + #","isPrivate":1}"#, shown + #","fallbackReason":3}"#,
            #"{"configuration":{},"entryPoint":"application","renderedBy":"shield","stores":["a",1],"target":{}}"#,
            #"{"configuration":{},"entryPoint":"application","renderedBy":"shield","stores":null,"target":{}}"#,
            #"{"configuration":{},"entryPoint":"application","stores":[],"target":{}}"#,
            #"{"configuration":{},"entryPoint":"application","renderedBy":"shield","stores":[]}"#,
            #"{"configuration":{"title":{"text":"t"}},"entryPoint":"application","renderedBy":"shield","stores":[],"target":{}}"#,
        ]
        for body in shownBodies {
            let decoded = try? DeviceAPICoding.decode(ShieldShown.self, from: Array(body.utf8))
            XCTAssertEqual(ShieldShown(body: try JSONValue(parsing: body)), decoded, body)
        }
        let activityBodies = [
            #"{"application":{"token":"a"},"reason":"user"}"#, #"{"application":{},"category":null,"reason":"user","x":[]}"#,
            #"{"application":{},"category":{"token":"c"},"reason":"user"}"#, #"{"application":null,"reason":"user"}"#,
            #"{"reason":"user"}"#, #"{"application":{}}"#, #"{"application":{},"reason":7}"#, #"{"application":{},"category":"c","reason":"u"}"#,
        ]
        for body in activityBodies {
            let decoded = try? DeviceAPICoding.decode(AppActivity.self, from: Array(body.utf8))
            XCTAssertEqual(AppActivity(body: try JSONValue(parsing: body)), decoded, body)
        }
    }

    func testWebActivityAndNotificationsReadWhatTheOSWrites() throws {
        let category = ActivityCategory(token: ActivityCategoryToken(rawValue: "cat-1"), localizedDisplayName: "Social")
        for activity in [WebActivity(webDomain: WebDomain(token: WebDomainToken(rawValue: "w"), domain: "x.com"), category: category,
                                     url: "https://x.com/a \"b\"", tab: 3, isPrivate: true, reason: "user"),
                         WebActivity(webDomain: WebDomain(token: nil), category: nil, url: "", tab: -1, isPrivate: false, reason: "")] {
            XCTAssertEqual(WebActivity(body: try JSONValue(parsing: DeviceAPICoding.encode(activity))), activity)
        }
        for level in NotificationRequest.InterruptionLevel.allCases {
            for kind in [nil, "streak", ""] {
                let request = NotificationRequest(id: "n-1", title: "Tïtle\n", body: "b", interruptionLevel: level, kind: kind)
                XCTAssertEqual(NotificationRequest(body: try JSONValue(parsing: DeviceAPICoding.encode(request))), request)
            }
        }
    }

    func testWebActivityAndNotificationsReadNothingFromWhatJSONDecoderRefusedAndTheSameFromWhatItTook() throws {
        let web = #"{"isPrivate":false,"reason":"user","tab":1,"url":"u""#
        let webBodies = [
            web + #","webDomain":{}}"#, web + #","webDomain":{"domain":"x.com","token":null},"category":null,"x":1}"#,
            web + #","webDomain":{},"category":{"token":"c"}}"#, web + #","webDomain":null}"#, web + "}", web + #","webDomain":[]}"#,
            web + #","webDomain":{},"category":"c"}"#, web + #","webDomain":{"domain":3}}"#,
            #"{"isPrivate":"no","reason":"user","tab":1,"url":"u","webDomain":{}}"#, #"{"isPrivate":false,"reason":"user","tab":"1","url":"u","webDomain":{}}"#,
            #"{"isPrivate":false,"reason":"user","tab":1.5,"url":"u","webDomain":{}}"#, #"{"isPrivate":false,"tab":1,"url":"u","webDomain":{}}"#,
            #"{"isPrivate":false,"reason":"user","tab":1,"webDomain":{}}"#, #"[]"#,
        ]
        for body in webBodies {
            let decoded = try? DeviceAPICoding.decode(WebActivity.self, from: Array(body.utf8))
            XCTAssertEqual(WebActivity(body: try JSONValue(parsing: body)), decoded, body)
        }
        let notificationBodies = [
            #"{"id":"1","title":"t","body":"b","interruptionLevel":"active"}"#, #"{"id":"1","title":"t","body":"b","interruptionLevel":"time-sensitive","kind":null,"x":2}"#,
            #"{"id":"1","title":"t","body":"b","interruptionLevel":"passive","kind":"k"}"#, #"{"id":"1","title":"t","body":"b","interruptionLevel":"loud"}"#,
            #"{"id":"1","title":"t","body":"b"}"#, #"{"id":1,"title":"t","body":"b","interruptionLevel":"active"}"#,
            #"{"title":"t","body":"b","interruptionLevel":"active"}"#, #"{"id":"1","body":"b","interruptionLevel":"active"}"#,
            #"{"id":"1","title":"t","interruptionLevel":"active"}"#, #"{"id":"1","title":"t","body":"b","interruptionLevel":"active","kind":7}"#,
            #"{"id":"1","title":"t","body":null,"interruptionLevel":"active"}"#,
        ]
        for body in notificationBodies {
            let decoded = try? DeviceAPICoding.decode(NotificationRequest.self, from: Array(body.utf8))
            XCTAssertEqual(NotificationRequest(body: try JSONValue(parsing: body)), decoded, body)
        }
    }
}
