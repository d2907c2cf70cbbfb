import Configuration
import XCTest

final class AppCatalogTests: XCTestCase {
    static let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// A small valid catalog; tests append to it or replace lines in it.
    static let small = """
    categories:
      - {id: social, name: Social}
      - {id: information-reading, name: "Information & Reading"}
      - {id: utilities, name: Utilities}
    apps:
      - {bundle: com.burbn.instagram, name: Instagram, category: social, domains: [instagram.com]}
      - {bundle: com.zhiliaoapp.musically, name: TikTok, category: social, domains: [tiktok.com]}
      - {bundle: com.apple.mobilesafari, name: Safari, category: utilities}
      - {bundle: com.google.Maps, name: Google Maps, category: utilities, domains: [maps.google.com]}
    webDomains:
      - {domain: nytimes.com, category: information-reading}
      - {domain: google.com, category: utilities}

    """

    func parse(_ text: String) throws -> AppCatalog {
        try AppCatalog.parse(YAMLValue.parse(text, file: "catalog.yml"))
    }

    func assertError(_ text: String, line: Int, key: String, contains: String, file: StaticString = #filePath, testLine: UInt = #line) {
        XCTAssertThrowsError(try parse(text), file: file, line: testLine) { error in
            guard let error = error as? ConfigurationError else { return XCTFail("\(error)", file: file, line: testLine) }
            XCTAssertEqual(error.line, line, "\(error)", file: file, line: testLine)
            XCTAssertEqual(error.key, key, "\(error)", file: file, line: testLine)
            XCTAssertTrue(error.description.hasPrefix("catalog.yml:\(line):"), error.description, file: file, line: testLine)
            XCTAssertTrue(error.description.contains(contains), error.description, file: file, line: testLine)
        }
    }

    // MARK: Reading

    func testReadsCategoriesAppsAndDomainsInFileOrder() throws {
        let catalog = try parse(Self.small)
        XCTAssertEqual(catalog.file, "catalog.yml")
        XCTAssertEqual(catalog.categories, [CatalogCategory(id: "social", name: "Social"),
                                            CatalogCategory(id: "information-reading", name: "Information & Reading"),
                                            CatalogCategory(id: "utilities", name: "Utilities")])
        XCTAssertEqual(catalog.apps.map(\.name), ["Instagram", "TikTok", "Safari", "Google Maps"])
        XCTAssertEqual(catalog.apps[0], CatalogApp(bundleIdentifier: "com.burbn.instagram", name: "Instagram", categoryID: "social", webDomains: ["instagram.com"]))
        XCTAssertEqual(catalog.apps[2].webDomains, [])
        XCTAssertEqual(catalog.webDomains, [
            CatalogWebDomain(domain: "instagram.com", categoryID: "social", ownerBundleIdentifier: "com.burbn.instagram"),
            CatalogWebDomain(domain: "tiktok.com", categoryID: "social", ownerBundleIdentifier: "com.zhiliaoapp.musically"),
            CatalogWebDomain(domain: "maps.google.com", categoryID: "utilities", ownerBundleIdentifier: "com.google.Maps"),
            CatalogWebDomain(domain: "nytimes.com", categoryID: "information-reading", ownerBundleIdentifier: nil),
            CatalogWebDomain(domain: "google.com", categoryID: "utilities", ownerBundleIdentifier: nil),
        ])
    }

    // MARK: Lookups

    func testAppByNameOrBundleIdentifierIgnoringCase() throws {
        let catalog = try parse(Self.small)
        XCTAssertEqual(catalog.app(named: "Instagram")?.bundleIdentifier, "com.burbn.instagram")
        XCTAssertEqual(catalog.app(named: "instagram")?.bundleIdentifier, "com.burbn.instagram")
        XCTAssertEqual(catalog.app(named: "TIKTOK")?.bundleIdentifier, "com.zhiliaoapp.musically")
        XCTAssertEqual(catalog.app(named: "com.burbn.instagram")?.name, "Instagram")
        XCTAssertEqual(catalog.app(named: "COM.Burbn.Instagram")?.name, "Instagram")
        XCTAssertEqual(catalog.app(named: "google maps")?.name, "Google Maps")
        XCTAssertNil(catalog.app(named: "Instagarm"))
        XCTAssertNil(catalog.app(named: ""))
    }

    func testLookupErrorSuggestsTheClosestName() throws {
        let catalog = try parse(Self.small)
        XCTAssertThrowsError(try catalog.requireApp(named: "Instagarm")) { error in
            XCTAssertEqual(error as? CatalogLookupError, CatalogLookupError(name: "Instagarm", suggestion: "Instagram"))
            XCTAssertEqual("\(error)", "no app named 'Instagarm' in the catalog — did you mean 'Instagram'?")
        }
        XCTAssertThrowsError(try catalog.requireApp(named: "com.burbn.instagarm")) { error in
            XCTAssertEqual("\(error)", "no app named 'com.burbn.instagarm' in the catalog — did you mean 'com.burbn.instagram'?")
        }
        XCTAssertThrowsError(try catalog.requireApp(named: "Minesweeper")) { error in
            XCTAssertEqual("\(error)", "no app named 'Minesweeper' in the catalog")
        }
        XCTAssertEqual(try catalog.requireApp(named: "safari").bundleIdentifier, "com.apple.mobilesafari")
    }

    func testCategoryByID() throws {
        let catalog = try parse(Self.small)
        XCTAssertEqual(catalog.category(id: "information-reading")?.name, "Information & Reading")
        XCTAssertNil(catalog.category(id: "Social"))
    }

    func testDomainMatchesItselfAndSubdomainsAndPrefersTheLongestMatch() throws {
        let catalog = try parse(Self.small)
        XCTAssertEqual(catalog.domain("instagram.com")?.ownerBundleIdentifier, "com.burbn.instagram")
        XCTAssertEqual(catalog.domain("www.instagram.com")?.domain, "instagram.com")
        XCTAssertEqual(catalog.domain("a.b.instagram.com")?.domain, "instagram.com")
        XCTAssertEqual(catalog.domain("WWW.Instagram.COM.")?.domain, "instagram.com")
        XCTAssertEqual(catalog.domain("www.nytimes.com"), CatalogWebDomain(domain: "nytimes.com", categoryID: "information-reading", ownerBundleIdentifier: nil))
        XCTAssertEqual(catalog.domain("maps.google.com")?.ownerBundleIdentifier, "com.google.Maps")
        XCTAssertEqual(catalog.domain("www.maps.google.com")?.ownerBundleIdentifier, "com.google.Maps")
        XCTAssertEqual(catalog.domain("mail.google.com")?.domain, "google.com")
        XCTAssertNil(catalog.domain("notinstagram.com"), "a suffix match must end at a dot")
        XCTAssertNil(catalog.domain("instagram.com.evil.example"))
        XCTAssertNil(catalog.domain("com"))
        XCTAssertNil(catalog.domain(""))
    }

    // MARK: Validation

    func testUnknownTopLevelKeyIsRefusedWithASuggestion() {
        assertError(Self.small + "webdomains: []\n", line: 13, key: "webdomains", contains: "did you mean 'webDomains'?")
    }

    func testMissingSections() {
        assertError("apps: []\n", line: 1, key: "", contains: "a catalog needs 'categories'")
        assertError("categories:\n  - {id: social, name: Social}\n", line: 1, key: "", contains: "a catalog needs 'apps'")
        assertError("categories: []\napps: []\n", line: 1, key: "categories", contains: "at least one category")
    }

    func testCategoryMistakes() {
        assertError("categories:\n  - {id: Social, name: Social}\napps: []\n", line: 2, key: "categories[0].id", contains: "lowercase letters")
        assertError("categories:\n  - {id: social, name: Social}\n  - {id: social, name: Other}\napps: []\n",
                    line: 3, key: "categories[1].id", contains: "the category id 'social' is used twice")
        assertError("categories:\n  - {id: social, name: Social}\n  - {id: other, name: social}\napps: []\n",
                    line: 3, key: "categories[1].name", contains: "the category name 'social' is used twice")
        assertError("categories:\n  - {id: social}\napps: []\n", line: 2, key: "categories[0]", contains: "category 'social' needs a 'name'")
        assertError("categories:\n  - {id: social, name: Social, colour: red}\napps: []\n",
                    line: 2, key: "categories[0].colour", contains: "unknown key")
    }

    func testAppWithAnUnknownCategorySuggestsOne() {
        let text = Self.small.replacingOccurrences(of: "name: TikTok, category: social", with: "name: TikTok, category: socail")
        assertError(text, line: 7, key: "apps[1].category", contains: "no category 'socail' in the catalog — did you mean 'social'?")
    }

    func testDuplicateBundleIdentifierIsRefusedIgnoringCase() {
        let text = Self.small.replacingOccurrences(of: "bundle: com.zhiliaoapp.musically", with: "bundle: COM.burbn.instagram")
        assertError(text, line: 7, key: "apps[1].bundle", contains: "the bundle identifier 'COM.burbn.instagram' is used twice")
    }

    func testDuplicateNameIsRefusedIgnoringCase() {
        let text = Self.small.replacingOccurrences(of: "name: TikTok", with: "name: INSTAGRAM")
        assertError(text, line: 7, key: "apps[1].name", contains: "the app name 'INSTAGRAM' is used twice")
    }

    func testBadBundleIdentifier() {
        let text = Self.small.replacingOccurrences(of: "bundle: com.apple.mobilesafari", with: "bundle: safari")
        assertError(text, line: 8, key: "apps[2].bundle", contains: "reverse-DNS")
        // Letters beyond ASCII, an empty part, a space or an underscore: not a bundle identifier either.
        for bundle in ["com.äpple.safari", "com..safari", "com.apple.", "'com.apple safari'", "com.apple_safari", "'com.apple.²'"] {
            assertError(Self.small.replacingOccurrences(of: "bundle: com.apple.mobilesafari", with: "bundle: \(bundle)"),
                        line: 8, key: "apps[2].bundle", contains: "reverse-DNS")
        }
        XCTAssertNoThrow(try parse(Self.small.replacingOccurrences(of: "bundle: com.apple.mobilesafari", with: "bundle: Com.Apple-2.Safari9")))
    }

    func testAppNeedsABundleNameAndCategory() {
        assertError(Self.small.replacingOccurrences(of: "bundle: com.apple.mobilesafari, ", with: ""), line: 8, key: "apps[2]", contains: "needs a 'bundle'")
        assertError(Self.small.replacingOccurrences(of: "name: Safari, ", with: ""), line: 8, key: "apps[2]", contains: "needs a display 'name'")
        assertError(Self.small.replacingOccurrences(of: ", category: utilities}", with: "}"), line: 8, key: "apps[2]", contains: "'Safari' needs a 'category'")
    }

    func testAKeyWrittenTwiceIsRefused() {
        let text = Self.small.replacingOccurrences(of: "name: TikTok, category: social", with: "name: TikTok, category: social, category: games")
        assertError(text, line: 7, key: "apps[1].category", contains: "the key is written twice in this mapping (first on line 7)")
    }

    func testUnknownAppKeyIsRefusedWithASuggestion() {
        let text = Self.small.replacingOccurrences(of: "domains: [tiktok.com]", with: "domain: [tiktok.com]")
        assertError(text, line: 7, key: "apps[1].domain", contains: "did you mean 'domains'?")
    }

    func testDomainsMustBeLowercaseHostnames() {
        assertError(Self.small.replacingOccurrences(of: "[tiktok.com]", with: "[TikTok.com]"),
                    line: 7, key: "apps[1].domains[0]", contains: "lowercase: 'tiktok.com'")
        assertError(Self.small.replacingOccurrences(of: "[tiktok.com]", with: "[\"https://tiktok.com\"]"),
                    line: 7, key: "apps[1].domains[0]", contains: "bare hostname")
        assertError(Self.small.replacingOccurrences(of: "[tiktok.com]", with: "[tiktok]"),
                    line: 7, key: "apps[1].domains[0]", contains: "expected a hostname like instagram.com")
        assertError(Self.small.replacingOccurrences(of: "[tiktok.com]", with: "[tik_tok.com]"),
                    line: 7, key: "apps[1].domains[0]", contains: "expected a hostname")
        // A letter beyond ASCII, and a label longer than 63 characters.
        for domain in ["tiktök.com", String(repeating: "a", count: 64) + ".com"] {
            assertError(Self.small.replacingOccurrences(of: "[tiktok.com]", with: "[\(domain)]"), line: 7, key: "apps[1].domains[0]", contains: "expected a hostname")
        }
        assertError(Self.small.replacingOccurrences(of: "[tiktok.com]", with: "[-tiktok.com]"),
                    line: 7, key: "apps[1].domains[0]", contains: "expected a hostname")
        assertError(Self.small.replacingOccurrences(of: "{domain: nytimes.com", with: "{domain: nytimes..com"),
                    line: 11, key: "webDomains[0].domain", contains: "expected a hostname")
    }

    func testADomainBelongsToAtMostOneApp() {
        let text = Self.small.replacingOccurrences(of: "[tiktok.com]", with: "[tiktok.com, instagram.com]")
        assertError(text, line: 7, key: "apps[1].domains[1]", contains: "the domain 'instagram.com' is already listed on line 6")
    }

    func testAStandaloneDomainMayNotRepeatAnOwnedOne() {
        let text = Self.small.replacingOccurrences(of: "{domain: nytimes.com", with: "{domain: tiktok.com")
        assertError(text, line: 11, key: "webDomains[0].domain", contains: "already listed on line 7")
    }

    func testStandaloneDomainNeedsAKnownCategory() {
        assertError(Self.small.replacingOccurrences(of: "category: information-reading}", with: "category: news}"),
                    line: 11, key: "webDomains[0].category", contains: "no category 'news'")
        assertError(Self.small.replacingOccurrences(of: ", category: information-reading}", with: "}"),
                    line: 11, key: "webDomains[0]", contains: "'nytimes.com' needs a 'category'")
    }

    // MARK: Extending a base catalog

    func extend(_ text: String) throws -> AppCatalog {
        try AppCatalog.parse(YAMLValue.parse(text, file: "mine.yml"), extending: parse(Self.small))
    }

    func testAnExtensionAddsAppsCategoriesAndDomainsToTheBase() throws {
        let catalog = try extend("""
            categories:
              - {id: games, name: Games}
            apps:
              - {bundle: com.example.wordgame, name: Word Game, category: games, domains: [wordgame.example.com]}
              - {bundle: com.example.notes, name: Notes Plus, category: utilities}
            webDomains:
              - {domain: news.example.org, category: information-reading}

            """)
        XCTAssertEqual(catalog.categories.map(\.id), ["social", "information-reading", "utilities", "games"])
        XCTAssertEqual(catalog.apps.map(\.name), ["Instagram", "TikTok", "Safari", "Google Maps", "Word Game", "Notes Plus"])
        XCTAssertEqual(catalog.app(named: "instagram")?.bundleIdentifier, "com.burbn.instagram")
        XCTAssertEqual(catalog.app(named: "com.example.wordgame")?.categoryID, "games")
        XCTAssertEqual(catalog.domain("www.wordgame.example.com")?.ownerBundleIdentifier, "com.example.wordgame")
        XCTAssertEqual(catalog.domain("maps.google.com")?.ownerBundleIdentifier, "com.google.Maps")
        XCTAssertEqual(catalog.domain("news.example.org")?.categoryID, "information-reading")
    }

    func testAnExtensionNeedsNoSectionAndMayNotListTheBaseAgain() throws {
        XCTAssertEqual(try extend("apps: []\n").apps.count, 4)
        XCTAssertEqual(try extend("categories:\n  - {id: games, name: Games}\n").categories.count, 4)
        for (text, message) in [
            ("apps:\n  - {bundle: com.burbn.instagram, name: Insta, category: social}\n", "the bundle identifier 'com.burbn.instagram' is already in catalog.yml"),
            ("apps:\n  - {bundle: com.example.insta, name: INSTAGRAM, category: social}\n", "the app name 'INSTAGRAM' is already in catalog.yml"),
            ("apps:\n  - {bundle: com.example.gram, name: Gram, category: social, domains: [instagram.com]}\n",
             "the domain 'instagram.com' is already listed in catalog.yml"),
            ("categories:\n  - {id: social, name: Social Media}\n", "the category id 'social' is already in catalog.yml"),
            ("apps:\n  - {bundle: com.example.game, name: Game, category: gamez}\n", "no category 'gamez' in the catalog"),
        ] {
            XCTAssertThrowsError(try extend(text), text) { error in
                XCTAssertTrue("\(error)".hasPrefix("mine.yml:2:"), "\(error)")
                XCTAssertTrue("\(error)".contains(message), "\(error)")
            }
        }
    }

    func testAStandaloneCatalogIgnoresTheBase() throws {
        let catalog = try extend("""
            standalone: true
            categories:
              - {id: games, name: Games}
            apps:
              - {bundle: com.example.wordgame, name: Word Game, category: games}

            """)
        XCTAssertEqual(catalog.apps.map(\.name), ["Word Game"])
        XCTAssertNil(catalog.app(named: "Instagram"))
        XCTAssertThrowsError(try extend("standalone: true\napps: []\n")) { error in
            XCTAssertTrue("\(error)".contains("a catalog needs 'categories'"), "\(error)")
        }
    }

    // MARK: The shipped catalog

    func testTheShippedCatalogIsValidAndRealistic() throws {
        let catalog = try AppCatalog.load(path: Self.repositoryRoot.appendingPathComponent("Config/catalog.yml").path)
        XCTAssertGreaterThanOrEqual(catalog.apps.count, 30)
        XCTAssertGreaterThanOrEqual(Set(catalog.apps.map(\.categoryID)).count, 8)
        XCTAssertEqual(catalog.categories.map(\.name), [
            "Social", "Games", "Entertainment", "Productivity & Finance", "Education", "Health & Fitness",
            "Information & Reading", "Creativity", "Shopping & Food", "Travel", "Utilities", "Other",
        ])
        for (bundle, name) in [("dev.shieldbus.habitlock", "Habit Lock"), ("dev.shieldbus.focuswindow", "Focus Window"),
                               ("dev.shieldbus.speedbump", "Speed Bump")] {
            XCTAssertEqual(catalog.app(named: bundle)?.name, name)
            XCTAssertEqual(catalog.app(named: bundle)?.categoryID, "productivity-finance")
        }
        XCTAssertEqual(catalog.app(named: "Safari")?.bundleIdentifier, "com.apple.mobilesafari")
        XCTAssertEqual(catalog.app(named: "Safari")?.categoryID, "utilities")
        for name in ["Instagram", "TikTok", "YouTube", "Reddit", "X", "Facebook", "Snapchat", "WhatsApp", "Netflix", "Spotify",
                     "Candy Crush", "Clash Royale", "Roblox", "Duolingo", "Kindle", "Notion", "Slack", "Gmail", "Chrome", "Maps",
                     "Uber", "Amazon", "Headspace", "Strava"] {
            XCTAssertNotNil(catalog.app(named: name), name)
        }
        XCTAssertEqual(catalog.domain("www.instagram.com")?.ownerBundleIdentifier, "com.burbn.instagram")
        XCTAssertEqual(catalog.domain("www.nytimes.com")?.categoryID, "information-reading")
    }
}
