import XCTest
@testable import ScreenTime

final class ShieldMatcherTests: XCTestCase {
    let social = category("cat.social")
    let games = category("cat.games")
    let instagram = app("app.instagram")
    let tiktok = app("app.tiktok")
    let chess = app("app.chess")
    let companion = app("app.companion")

    func testNoStoresShieldsNothing() {
        XCTAssertNil(ShieldMatcher(stores: [:]).match(application: instagram, category: social))
        XCTAssertNil(ShieldMatcher(stores: ["main": ShieldSettings()]).match(application: instagram, category: social))
    }

    func testAppShieldedByTokenUsesApplicationEntryPoint() {
        let matcher = ShieldMatcher(stores: ["main": ShieldSettings(applications: [instagram])])
        XCTAssertEqual(matcher.match(application: instagram, category: social), ShieldMatch(entryPoint: .application, stores: ["main"]))
        XCTAssertNil(matcher.match(application: tiktok, category: social))
    }

    func testAppInShieldedCategoryUsesInCategoryEntryPoint() {
        let matcher = ShieldMatcher(stores: ["main": ShieldSettings(applicationCategories: .specific([social]))])
        XCTAssertEqual(matcher.match(application: tiktok, category: social), ShieldMatch(entryPoint: .applicationInCategory, stores: ["main"]))
        XCTAssertNil(matcher.match(application: chess, category: games))
        XCTAssertNil(matcher.match(application: chess, category: nil), "an app without a category is never in a specific category")
    }

    func testTokenShieldTakesPrecedenceOverCategoryShield() {
        let settings = ShieldSettings(applications: [instagram], applicationCategories: .specific([social]))
        let match = ShieldMatcher(stores: ["main": settings]).match(application: instagram, category: social)
        XCTAssertEqual(match?.entryPoint, .application)
    }

    func testSpecificPolicyExceptionsExempt() {
        let matcher = ShieldMatcher(stores: ["main": ShieldSettings(applicationCategories: .specific([social], except: [instagram]))])
        XCTAssertNil(matcher.match(application: instagram, category: social))
        XCTAssertEqual(matcher.match(application: tiktok, category: social)?.entryPoint, .applicationInCategory)
    }

    func testAllPolicyShieldsEverythingButExceptions() {
        let matcher = ShieldMatcher(stores: ["main": ShieldSettings(applicationCategories: .all(except: [chess]))])
        XCTAssertEqual(matcher.match(application: tiktok, category: social)?.entryPoint, .applicationInCategory)
        XCTAssertEqual(matcher.match(application: instagram, category: nil)?.entryPoint, .applicationInCategory, ".all covers uncategorized apps")
        XCTAssertNil(matcher.match(application: chess, category: games))
    }

    func testOwnerAppIsExemptFromAllButNotFromItsOwnTokenShield() {
        let all = ShieldMatcher(stores: ["main": ShieldSettings(applicationCategories: .all())])
        XCTAssertNil(all.match(application: companion, category: social, owner: companion))
        XCTAssertNotNil(all.match(application: companion, category: social), "without an owner, nothing is exempt")
        XCTAssertNotNil(all.match(application: tiktok, category: social, owner: companion))
        let specific = ShieldMatcher(stores: ["main": ShieldSettings(applicationCategories: .specific([social]))])
        XCTAssertNotNil(specific.match(application: companion, category: social, owner: companion), "Apple exempts the owner from .all only")
    }

    func testNonePolicyShieldsNothing() {
        let matcher = ShieldMatcher(stores: ["main": ShieldSettings(applicationCategories: ShieldSettings.ActivityCategoryPolicy.none)])
        XCTAssertNil(matcher.match(application: tiktok, category: social))
    }

    func testExceptionDoesNotLiftATokenShieldNorAnotherStore() {
        let sameStore = ShieldSettings(applications: [instagram], applicationCategories: .specific([social], except: [instagram]))
        XCTAssertEqual(ShieldMatcher(stores: ["main": sameStore]).match(application: instagram, category: social),
                       ShieldMatch(entryPoint: .application, stores: ["main"]))
        let matcher = ShieldMatcher(stores: [
            "lenient": ShieldSettings(applicationCategories: .specific([social], except: [instagram])),
            "strict": ShieldSettings(applicationCategories: .specific([social])),
        ])
        XCTAssertEqual(matcher.match(application: instagram, category: social), ShieldMatch(entryPoint: .applicationInCategory, stores: ["strict"]))
    }

    func testSeveralStoresAreAllReportedSortedAndTokenWinsAcrossStores() {
        let matcher = ShieldMatcher(stores: [
            "schedule": ShieldSettings(applicationCategories: .specific([social])),
            "allDay": ShieldSettings(applications: [instagram]),
            "focus": ShieldSettings(applicationCategories: .all()),
            "other": ShieldSettings(applications: [chess]),
        ])
        XCTAssertEqual(matcher.match(application: instagram, category: social),
                       ShieldMatch(entryPoint: .application, stores: ["allDay", "focus", "schedule"]))
        XCTAssertEqual(matcher.match(application: tiktok, category: social),
                       ShieldMatch(entryPoint: .applicationInCategory, stores: ["focus", "schedule"]))
    }

    func testWebDomainsByTokenAndByCategory() {
        let news = category("cat.news")
        let instagramWeb = domain("web.instagram")
        let cnn = domain("web.cnn")
        let wiki = domain("web.wiki")
        let matcher = ShieldMatcher(stores: [
            "main": ShieldSettings(webDomains: [instagramWeb], webDomainCategories: .specific([social, news], except: [cnn])),
        ])
        XCTAssertEqual(matcher.match(webDomain: instagramWeb, category: social), ShieldMatch(entryPoint: .webDomain, stores: ["main"]))
        XCTAssertEqual(matcher.match(webDomain: domain("web.reddit"), category: social), ShieldMatch(entryPoint: .webDomainInCategory, stores: ["main"]))
        XCTAssertNil(matcher.match(webDomain: cnn, category: news), "an exception exempts")
        XCTAssertNil(matcher.match(webDomain: wiki, category: category("cat.reference")))
    }

    func testWebDomainAllPolicyAndAppSettingsDoNotLeakIntoWebDomains() {
        let wiki = domain("web.wiki")
        let allWeb = ShieldMatcher(stores: ["main": ShieldSettings(webDomainCategories: .all(except: [wiki]))])
        XCTAssertEqual(allWeb.match(webDomain: domain("web.any"), category: nil)?.entryPoint, .webDomainInCategory)
        XCTAssertNil(allWeb.match(webDomain: wiki, category: nil))
        let appsOnly = ShieldMatcher(stores: ["main": ShieldSettings(applicationCategories: .all())])
        XCTAssertNil(appsOnly.match(webDomain: domain("web.any"), category: social), "application categories don't shield web domains")
    }
}
