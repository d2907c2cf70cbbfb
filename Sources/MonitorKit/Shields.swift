import DeviceActivity
import Foundation
import ManagedSettings
import ScreenTime

/// What to block: the person's selection, as tokens.
public struct BlockList: Equatable {
    public var applications: Set<ApplicationToken>
    public var categories: Set<ActivityCategoryToken>
    public var webDomains: Set<WebDomainToken>

    public init(applications: Set<ApplicationToken> = [], categories: Set<ActivityCategoryToken> = [], webDomains: Set<WebDomainToken> = []) {
        self.applications = applications
        self.categories = categories
        self.webDomains = webDomains
    }

    public init(_ selection: FamilyActivitySelection) {
        self.init(applications: selection.applicationTokens, categories: selection.categoryTokens, webDomains: selection.webDomainTokens)
    }

    public var isEmpty: Bool { applications.isEmpty && categories.isEmpty && webDomains.isEmpty }
}

/// Applying and lifting the product's shields: apps, categories and web domains together, every time (lesson 5).
public struct Shields {
    public let store: ManagedSettingsStore

    public init(storeName: String) {
        store = ManagedSettingsStore(named: ManagedSettingsStore.Name(storeName))
    }

    /// Shields everything in the list, keeping what is already shielded, but for the apps `passing` (a running pass):
    /// they stay out, or become the category shield's exceptions. One write: apps, categories, domains — an app
    /// shielded by one write and lifted by the next is closed and shows its shield.
    public func block(_ list: BlockList, passing: Set<ApplicationToken> = []) throws {
        try store.shield.update { shield in
            shield.applications = (shield.applications ?? []).union(list.applications).subtracting(passing)
            shield.webDomains = (shield.webDomains ?? []).union(list.webDomains)
            if !list.categories.isEmpty {
                var categories = Set<ActivityCategoryToken>()
                if case .specific(let current, _)? = shield.applicationCategories { categories = current }
                shield.applicationCategories = .specific(categories.union(list.categories), except: passing)
                var webCategories = Set<ActivityCategoryToken>()
                if case .specific(let current, _)? = shield.webDomainCategories { webCategories = current }
                shield.webDomainCategories = .specific(webCategories.union(list.categories))
            }
        }
    }

    /// Lifts every shield of the store (only the stores' owner may).
    public func liftAll() throws {
        try store.removeAllSettings()
    }

    /// Lifts the shield of one app only (a pass, a nudge): its token comes out of the app list and, if it is
    /// shielded by category, it becomes an exception.
    public func lift(application token: ApplicationToken) throws {
        try store.shield.update { shield in
            shield.applications?.remove(token)
            if case .specific(let categories, let except)? = shield.applicationCategories {
                shield.applicationCategories = .specific(categories, except: except.union([token]))
            }
        }
    }

    /// Shields one app again after its pass.
    public func reshield(application token: ApplicationToken) throws {
        try store.shield.update { shield in
            shield.applications = (shield.applications ?? []).union([token])
            if case .specific(let categories, let except)? = shield.applicationCategories {
                shield.applicationCategories = .specific(categories, except: except.subtracting([token]))
            }
        }
    }

    /// Whether anything is shielded.
    public func isBlocking() throws -> Bool { !(try store.shield.current().isEmpty) }
}

/// The person's selection as the OS keeps it current: an all-day activity whose one event holds the selection. The OS
/// regenerates every token at an iOS update (FB14237883) and keeps its own copies current; a saved copy goes stale and
/// shields nothing. The app registers it (`register`); every extension reads it (`current`).
public struct KeptSelection: Sendable {
    public let activity: DeviceActivityName
    public let event: DeviceActivityEvent.Name

    public init(activity: DeviceActivityName, event: DeviceActivityEvent.Name) {
        self.activity = activity
        self.event = event
    }

    /// Registers the selection with the OS, all day every day (its threshold is never reached).
    public func register(_ list: BlockList, center: DeviceActivityCenter) throws {
        try center.startMonitoring(activity, during: TrueTimeSchedules.allDay, events: [
            event: DeviceActivityEvent(applications: list.applications, categories: list.categories, webDomains: list.webDomains,
                                       threshold: DateComponents(hour: 23, minute: 59)),
        ])
    }

    /// The saved selection together with the OS's copy of it.
    public func current(_ saved: BlockList, center: DeviceActivityCenter) -> BlockList {
        var list = saved
        if let copy = try? center.monitoredEvents(for: activity)[event] {
            list.applications.formUnion(copy.applications)
            list.categories.formUnion(copy.categories)
            list.webDomains.formUnion(copy.webDomains)
        }
        return list
    }

    /// The OS's copy alone, if registered.
    public func osCopy(center: DeviceActivityCenter) -> DeviceActivityEvent? {
        try? center.monitoredEvents(for: activity)[event]
    }
}
