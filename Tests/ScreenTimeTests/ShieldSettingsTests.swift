import XCTest
@testable import ScreenTime

final class ShieldSettingsTests: XCTestCase {
    func testIsEmpty() {
        XCTAssertTrue(ShieldSettings().isEmpty)
        XCTAssertTrue(ShieldSettings(applications: [], applicationCategories: ShieldSettings.ActivityCategoryPolicy.none, webDomains: [],
                                     webDomainCategories: .specific([], except: [domain("d")])).isEmpty)
        XCTAssertFalse(ShieldSettings(applications: [app("a")]).isEmpty)
        XCTAssertFalse(ShieldSettings(applicationCategories: .all()).isEmpty)
        XCTAssertFalse(ShieldSettings(webDomains: [domain("d")]).isEmpty)
        XCTAssertFalse(ShieldSettings(webDomainCategories: .specific([category("c")])).isEmpty)
    }

    func testInsertAndRemoveApplications() {
        var settings = ShieldSettings()
        settings.insert(applications: [app("a"), app("b")])
        settings.insert(applications: [app("c")])
        XCTAssertEqual(settings.applications, [app("a"), app("b"), app("c")])
        settings.remove(applications: [app("a"), app("b")])
        XCTAssertEqual(settings.applications, [app("c")])
        settings.remove(applications: [app("c")])
        XCTAssertNil(settings.applications, "removing the last token clears the setting")
        XCTAssertTrue(settings.isEmpty)
    }

    func testInsertAndRemoveWebDomains() {
        var settings = ShieldSettings()
        settings.insert(webDomains: [domain("x")])
        XCTAssertEqual(settings.webDomains, [domain("x")])
        settings.remove(webDomains: [domain("x")])
        XCTAssertNil(settings.webDomains)
    }

    func testCategoryHelpersKeepExceptionsAndLeaveAllAlone() {
        var settings = ShieldSettings(applicationCategories: .specific([category("a")], except: [app("keep")]))
        settings.insert(applicationCategories: [category("b")])
        XCTAssertEqual(settings.applicationCategories, .specific([category("a"), category("b")], except: [app("keep")]))
        settings.remove(applicationCategories: [category("a"), category("b")])
        XCTAssertNil(settings.applicationCategories)

        settings.applicationCategories = .all(except: [app("keep")])
        settings.insert(applicationCategories: [category("c")])
        settings.remove(applicationCategories: [category("c")])
        XCTAssertEqual(settings.applicationCategories, .all(except: [app("keep")]))

        settings.insert(webDomainCategories: [category("c")])
        XCTAssertEqual(settings.webDomainCategories, .specific([category("c")]))
        settings.remove(webDomainCategories: [category("c")])
        XCTAssertNil(settings.webDomainCategories)
    }

    func testSelectionShieldsAppsCategoriesAndWebDomainsThenLiftsThem() {
        let selection = FamilyActivitySelection(applicationTokens: [app("a")], categoryTokens: [category("c")], webDomainTokens: [domain("d")])
        var settings = ShieldSettings()
        settings.insert(selection)
        XCTAssertEqual(settings, ShieldSettings(applications: [app("a")], applicationCategories: .specific([category("c")]),
                                                webDomains: [domain("d")], webDomainCategories: .specific([category("c")])))
        settings.remove(selection)
        XCTAssertEqual(settings, ShieldSettings())
    }

    func testPolicyShields() {
        let policy = ShieldSettings.ActivityCategoryPolicy<Application>.specific([category("c")], except: [app("x")])
        XCTAssertTrue(policy.shields(app("a"), category: category("c")))
        XCTAssertFalse(policy.shields(app("x"), category: category("c")))
        XCTAssertFalse(policy.shields(app("a"), category: category("other")))
    }

    func testTheFiftyTokenLimitOfEachSet() {
        let apps = Set((0..<50).map { app("a\($0)") })
        XCTAssertNil(ShieldSettings(applications: apps).tokenSetOverTheLimit, "50 is within the limit")
        XCTAssertEqual(ShieldSettings(applications: apps.union([app("one more")])).tokenSetOverTheLimit?.count, 51)
        let categories = Set((0..<51).map { category("c\($0)") })
        XCTAssertEqual(ShieldSettings(applicationCategories: .specific(categories)).tokenSetOverTheLimit?.setting, "applicationCategories categories")
        let exceptions = Set((0..<51).map { domain("d\($0)") })
        XCTAssertEqual(ShieldSettings(webDomainCategories: .all(except: exceptions)).tokenSetOverTheLimit?.setting, "webDomainCategories exceptions")
    }
}
