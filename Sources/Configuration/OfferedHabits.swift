// OfferedHabits: the habits the device's product apps offer (`habits:`), against which a completed habit is checked.

/// The habits the products' apps offer. Only the products that list theirs count: when none lists any, every name is
/// a habit (a configuration written before `habits:`, a custom product's free text).
public struct OfferedHabits: Equatable, Sendable {
    /// A product's app and the habits it lists, in its order.
    public struct Listing: Equatable, Sendable {
        public let app: String
        public let habits: [String]

        public init(app: String, habits: [String]) {
            self.app = app
            self.habits = habits
        }
    }

    /// The products that list their habits; empty: any name goes.
    public let listings: [Listing]

    /// No product lists its habits: any name goes.
    public static let anyName = OfferedHabits(listings: [])

    public init(listings: [Listing]) {
        self.listings = listings
    }

    /// The configuration's products' `habits:`, each under its app's name as `catalog` spells it (else the product's).
    public init(configuration: ShieldBusConfiguration, catalog: AppCatalog? = nil) {
        listings = configuration.resolvedProducts.compactMap { product in
            product.habits.map { habits in
                Listing(app: product.companionApp.map { catalog?.app(named: $0)?.name ?? $0 } ?? product.name, habits: habits)
            }
        }
    }

    /// Every habit offered, in the order listed; nil when any name goes (`[]` when the apps have none).
    public var names: [String]? {
        listings.isEmpty ? nil : listings.flatMap(\.habits)
    }

    /// A habit the person completes, as an app offers it.
    public enum Choice: Equatable, Sendable {
        /// Offered, spelled as its app lists it (matched without case); or any name when no app lists habits.
        case offered(String)
        /// Not offered: why, with the habits there are and the closest of them.
        case unknown(String)
    }

    public func choice(_ name: String) -> Choice {
        guard let habits = names else { return .offered(name) }
        if let habit = habits.first(where: { $0.caseInsensitiveCompare(name) == .orderedSame }) { return .offered(habit) }
        let apps = listings.map(\.app).joined(separator: " and ")
        guard !habits.isEmpty else { return .unknown("habit '\(name)': \(apps) has no habits") }
        let suggestion = closest(to: name, in: habits).map { " — did you mean '\($0)'?" } ?? ""
        return .unknown("no habit '\(name)' in \(apps); its habits: \(habits.joined(separator: ", "))\(suggestion)")
    }
}
