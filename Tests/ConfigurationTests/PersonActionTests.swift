import BusProtocol
import Configuration
import XCTest

/// The person's actions are named once: every verb reads back from its own request, and the three places that name
/// an action (`shieldbus do`, the input request, a scenario step) agree.
final class PersonActionTests: XCTestCase {
    /// One action of each verb, as the command line gives it.
    private static let examples: [(verb: String, value: String?)] = [
        ("open", "Instagram"), ("close", nil), ("home", nil), ("visit", "https://www.reddit.com/r/swift"), ("close-tab", nil),
        ("switch-tab", nil), ("press", "secondary"), ("habit", "Read 10 pages"), ("app-action", "skip-tonight"), ("restart", nil),
        ("force-quit", "Habit Lock"), ("os-update", nil), ("notification-tap", "n-3"), ("authorize", "revoke"), ("set-clock", "-30m"),
        ("time-zone", "Asia/Kolkata"), ("crash-broker", nil),
    ]

    func testEveryVerbHasAnExampleAndReadsBackFromItsRequest() throws {
        XCTAssertEqual(Set(Self.examples.map(\.verb)), Set(PersonVerb.names), "an example per verb")
        for (verb, value) in Self.examples {
            let action = try PersonAction(verb: verb, value: value, tab: 2, isPrivate: true, app: verb == "app-action" ? "Bedtime" : nil)
            XCTAssertEqual(action.verb.rawValue, verb)
            XCTAssertEqual(PersonVerb(requestTopic: action.verb.requestTopic), action.verb)
            // The device reads the request's body back into the same action.
            let body = try JSONValue(parsing: action.requestBody.jsonText)
            XCTAssertEqual(try PersonAction(verb: action.verb, requestBody: body), action, verb)
        }
    }

    func testTheCommandLinesWordsBecomeTheRequestsFields() throws {
        XCTAssertEqual(try PersonAction(verb: "authorize", value: "approve").requestBody, .object(["answer": "approved"]))
        XCTAssertEqual(try PersonAction(verb: "visit", value: "https://x.com", tab: 3, isPrivate: true).requestBody,
                       .object(["url": "https://x.com", "tab": 3, "private": true]))
        XCTAssertEqual(try PersonAction(verb: "habit").requestBody, .object(["habit": "habit"]))
        XCTAssertEqual(try PersonAction(verb: "close").requestBody, .object([:]))
    }

    func testWhatIsMissingOrWrongIsSaidByName() {
        func refusal(_ verb: String, _ value: String? = nil) -> String {
            do { _ = try PersonAction(verb: verb, value: value); return "accepted" } catch { return error.description }
        }
        XCTAssertTrue(refusal("frobnicate").hasPrefix("unknown action 'frobnicate'; actions: open, close, home"))
        XCTAssertEqual(refusal("open"), "'open' needs an app name")
        XCTAssertEqual(refusal("press", "tertiary"), "'press' needs primary or secondary")
        XCTAssertTrue(refusal("app-action", "skip tonight").hasPrefix("'app-action' needs the control's name"))
        XCTAssertEqual(refusal("authorize", "maybe"), "'authorize' needs approve, deny or revoke")

        func requestRefusal(_ verb: PersonVerb, _ body: JSONValue) -> String {
            do { _ = try PersonAction(verb: verb, requestBody: body); return "accepted" } catch { return error.description }
        }
        XCTAssertEqual(requestRefusal(.visit, .object(["url": "not a url"])), "'visit' needs 'url': an http(s) URL with a host")
        XCTAssertEqual(requestRefusal(.open, .object([:])), "'open' needs 'app': an app name")
        XCTAssertEqual(requestRefusal(.press, .object(["button": "third"])), "'press' needs 'button': primary or secondary")
        XCTAssertEqual(requestRefusal(.authorize, .object(["answer": "approve"])), "'authorize' needs 'answer': approved, denied or revoked")
        // What the device accepts, a saved scenario replays: the request is as strict as a scenario step.
        XCTAssertEqual(requestRefusal(.visit, .object(["url": "ftp://example.com/"])), "'visit' needs 'url': an http(s) URL with a host")
        XCTAssertEqual(requestRefusal(.closeTab, .object(["tab": 0])), "'close-tab' needs 'tab': a browser tab, 1 or more")
        // A field of the wrong type is refused by name, not taken as absent.
        XCTAssertEqual(requestRefusal(.close, .object(["app": 3])), "'close' takes 'app' as a string, not 3")
        XCTAssertEqual(requestRefusal(.visit, .object(["url": "https://x.com", "tab": "2"])), "'visit' needs 'tab': a browser tab, 1 or more")
        XCTAssertEqual(requestRefusal(.visit, .object(["url": "https://x.com", "private": "yes"])), "'visit' takes 'private' as true or false, not \"yes\"")
        XCTAssertEqual(try? PersonAction(verb: .close, requestBody: .object(["app": .null])), .close(app: nil))
        XCTAssertEqual(try? PersonAction(verb: .visit, requestBody: .object(["url": "https://x.com", "tab": .null, "private": .null])),
                       .visit(url: "https://x.com", tab: 1, isPrivate: false))
        XCTAssertEqual(try? PersonAction(verb: .habit, requestBody: .object(["habit": "  "])), .habit("habit"))
        XCTAssertEqual(try? PersonAction(verb: .habit, requestBody: .object(["habit": " Read "])), .habit("Read"))
    }

    /// A scenario step names each of the person's actions by the verb's scenario key.
    func testEveryVerbIsAScenarioStepKey() {
        for verb in PersonVerb.allCases {
            XCTAssertTrue(ScenarioAction.keys.contains(verb.scenarioKey), "\(verb.rawValue) → \(verb.scenarioKey)")
        }
        XCTAssertEqual(PersonVerb.closeTab.scenarioKey, "closeTab")
        XCTAssertEqual(PersonVerb.notificationTap.scenarioKey, "tapNotification")
    }
}
