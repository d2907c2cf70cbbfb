import Foundation

/// What a product promises: when each target it selected must be locked, and what lets the person through. The
/// lock-invariant checker judges every journal against it from what the person and the OS did alone
/// (docs/promises.md lists every rule and why it reads as it does).
///
/// A target is locked while any lock source holds (`locked`) and no exception lets it through (`unlocks`, `passes`,
/// `overrides`); a strict window admits no exception. Every change of state may lag by `grace`: the OS's callbacks
/// come on whole minutes.
public struct Promise: Equatable, Sendable {
    /// How long after a lock (or a permission) begins the other state may still show.
    public var grace: TimeInterval = 60
    public var locked = Locked()
    public var unlocks: [Unlock] = []
    public var passes: [Pass] = []
    public var overrides: [Override] = []
    /// What explore's generator should draw beyond what the rules name (a model's promise names nothing).
    public var hints = ExploreHints()
    /// The escape hatch: a model the checker asks instead of the rules above — a registered Swift type's name, or a
    /// program (a path relative to the configuration, or a program next to `shieldbus` or on PATH).
    public var model: String?
    public var line: Int

    public init(line: Int) {
        self.line = line
    }

    /// The sources of a lock; a target is locked while any holds.
    public struct Locked: Equatable, Sendable {
        /// Locked all the time (a habit lock's base).
        public var always = false
        public var windows: [Window] = []
        public var dailyUse: DailyUse?
        public var sessions: [Session] = []

        public init() {}
    }

    /// A wall-clock window in the zone in force, as the device shows it: `start` to `end` seconds of the local day (an
    /// end at or before the start ends on the next day), on the days it starts on.
    public struct Window: Equatable, Sendable {
        public var name: String?
        public var start: Int
        public var end: Int
        /// The weekdays it starts on (0 Sunday … 6 Saturday); nil: every day.
        public var weekdays: Set<Int>?
        /// The dates it starts on (`YYYY-MM-DD`); nil: every date.
        public var dates: Set<String>?
        /// No pass and no override applies within it.
        public var strict = false

        public init(start: Int, end: Int) {
            self.start = start
            self.end = end
        }
    }

    /// Locked from the instant the selection's use reaches `minutes` within the device's day to that day's end; a
    /// dismiss (the `dismiss` button on an app's shield) lets that app through and pauses the count for `cooldownMinutes`.
    public struct DailyUse: Equatable, Sendable {
        public var minutes: Int
        public var dismiss: ShieldButton?
        public var cooldownMinutes = 15

        public init(minutes: Int) {
            self.minutes = minutes
        }
    }

    /// Locked from the person's `start` action in the product's app, for `minutes` (nil: until `stop`), or until
    /// their `stop` action unless `strict`.
    public struct Session: Equatable, Sendable {
        public var name: String?
        public var start: String
        public var stop: String?
        public var minutes: Int?
        public var strict = false

        public init(start: String) {
            self.start = start
        }
    }

    /// Unlocked for `minutes` of true time once earned: by `habits` distinct habits in the local day (from the one that
    /// completes the count), or at each `appAction`.
    public struct Unlock: Equatable, Sendable {
        public enum Earned: Equatable, Sendable {
            case habits(Int)
            case appAction(String)
        }

        public var earned: Earned
        public var minutes: Int

        public init(earned: Earned, minutes: Int) {
            self.earned = earned
            self.minutes = minutes
        }
    }

    /// A pass from a shield button: `minutes` from the press on the target whose shield it was (or, `forProduct`, on
    /// every target); at most `cap` passes per window occurrence or device day — a press past the cap grants nothing.
    public struct Pass: Equatable, Sendable {
        public enum CapPeriod: String, Equatable, Sendable, CaseIterable { case window, day }

        public var button: ShieldButton
        public var minutes: Int
        public var forProduct = false
        /// Only apps get passes (a pass names the app's token; a web domain's shield has no such button).
        public var appsOnly = false
        public var cap: Int?
        public var capPer = CapPeriod.window

        public init(button: ShieldButton, minutes: Int) {
            self.button = button
            self.minutes = minutes
        }
    }

    /// What a person's action in the product's app does to the lock.
    public struct Override: Equatable, Sendable {
        public enum Effect: Equatable, Sendable {
            /// The window occurrence in progress, or else the next one to start (within a day), is lifted ("skip tonight").
            case skipWindow
            /// The rest of the window occurrence in progress is lifted ("end early").
            case endWindow
            /// Every lock is lifted for this long from the action ("pause for 15 minutes").
            case pause(minutes: Int)
        }

        public var appAction: String
        public var effect: Effect

        public init(appAction: String, effect: Effect) {
            self.appAction = appAction
            self.effect = effect
        }
    }

    /// What `explore` draws for a promise beyond the actions its rules name (`explore:`): the app actions, runs of
    /// presses of a button, and the wall-clock windows to press and act around — for a promise a model judges.
    public struct ExploreHints: Equatable, Sendable {
        public var appActions: [String] = []
        /// A run of `times` presses of `button`, each `apartMinutes` after the last.
        public var repeatedPresses: (button: ShieldButton, times: Int, apartMinutes: Int)?
        public var windows: [Window] = []

        public init() {}

        public static func == (lhs: ExploreHints, rhs: ExploreHints) -> Bool {
            lhs.appActions == rhs.appActions && lhs.windows == rhs.windows && lhs.repeatedPresses?.button == rhs.repeatedPresses?.button
                && lhs.repeatedPresses?.times == rhs.repeatedPresses?.times && lhs.repeatedPresses?.apartMinutes == rhs.repeatedPresses?.apartMinutes
        }
    }

    /// Whether it says anything: a lock source or a model.
    public var declaresALock: Bool {
        locked.always || !locked.windows.isEmpty || locked.dailyUse != nil || !locked.sessions.isEmpty || model != nil
    }

    /// The app actions it mentions (for explore to draw).
    public var appActions: [String] {
        var names: [String] = []
        for unlock in unlocks { if case .appAction(let name) = unlock.earned { names.append(name) } }
        for session in locked.sessions { names.append(session.start); if let stop = session.stop { names.append(stop) } }
        names += overrides.map(\.appAction) + hints.appActions
        var seen = Set<String>()
        return names.filter { seen.insert($0).inserted }
    }
}

extension Promise {
    /// Reads a `promise:` mapping; every mistake names its file, line and key.
    public static func parse(_ value: YAMLValue) throws -> Promise {
        let fields = try value.uniqueMapping(allowed: ["graceSeconds", "locked", "unlocks", "passes", "overrides", "model", "explore"])
        var promise = Promise(line: value.line)
        if let grace = fields["graceSeconds"] {
            let seconds = try grace.int()
            guard (0...3600).contains(seconds) else { throw grace.error("expected 0 to 3600 seconds, got \(seconds)") }
            promise.grace = TimeInterval(seconds)
        }
        if let locked = fields["locked"] { promise.locked = try parseLocked(locked) }
        promise.unlocks = try fields["unlocks"]?.list().map(parseUnlock) ?? []
        promise.passes = try fields["passes"]?.list().map(parsePass) ?? []
        promise.overrides = try fields["overrides"]?.list().map(parseOverride) ?? []
        promise.model = try fields["model"]?.string()
        if let hints = fields["explore"] {
            let members = try hints.uniqueMapping(allowed: ["appActions", "repeatedPresses", "windows"])
            promise.hints.appActions = try members["appActions"]?.list().map(actionName) ?? []
            promise.hints.windows = try members["windows"]?.list().map(parseWindow) ?? []
            if let presses = members["repeatedPresses"] {
                let run = try presses.uniqueMapping(allowed: ["button", "times", "apartMinutes"])
                guard let button = run["button"], let times = run["times"] else { throw presses.error("repeated presses need their button and times") }
                promise.hints.repeatedPresses = (try button.oneOf(ShieldButton.self), try positive(times, "times"),
                                                 try run["apartMinutes"].map { try positive($0, "apartMinutes") } ?? 6)
            }
        }
        guard promise.declaresALock else {
            throw value.error("a promise needs a lock: `locked: always`, or `locked:` with windows, dailyUse or sessions (or a `model`)")
        }
        if promise.overrides.contains(where: { $0.effect.isWindowEffect }), !promise.locked.windows.contains(where: { !$0.strict }) {
            throw fields["overrides"]!.error("skip-window and end-window need a window that is not strict (`locked.windows`) to act on")
        }
        if promise.model != nil, promise.locked != Locked() || !promise.unlocks.isEmpty || !promise.passes.isEmpty || !promise.overrides.isEmpty {
            throw fields["model"]!.error("a promise model says when targets are locked on its own: give either `model` or the rules, not both")
        }
        return promise
    }

    private static func parseLocked(_ value: YAMLValue) throws -> Locked {
        var locked = Locked()
        if case .scalar = value.node {
            guard try value.string() == "always" else { throw value.error("expected `always`, or a mapping with always, windows, dailyUse or sessions") }
            locked.always = true
            return locked
        }
        let fields = try value.uniqueMapping(allowed: ["always", "windows", "dailyUse", "sessions"])
        locked.always = try fields["always"]?.bool() ?? false
        locked.windows = try fields["windows"]?.list().map(parseWindow) ?? []
        if let value = fields["dailyUse"] {
            let use = try value.uniqueMapping(allowed: ["minutes", "dismiss", "cooldownMinutes"])
            guard let minutes = use["minutes"] else { throw value.error("dailyUse needs its threshold: minutes") }
            var dailyUse = DailyUse(minutes: try positive(minutes, "minutes"))
            dailyUse.dismiss = try use["dismiss"]?.oneOf(ShieldButton.self)
            if let cooldown = use["cooldownMinutes"] { dailyUse.cooldownMinutes = try positive(cooldown, "cooldownMinutes") }
            locked.dailyUse = dailyUse
        }
        locked.sessions = try fields["sessions"]?.list().map { entry in
            let fields = try entry.uniqueMapping(allowed: ["name", "start", "stop", "minutes", "strict"])
            guard let start = fields["start"] else { throw entry.error("a session needs the app action that starts it: start") }
            var session = Session(start: try actionName(start))
            session.name = try fields["name"]?.string()
            session.stop = try fields["stop"].map(actionName)
            session.minutes = try fields["minutes"].map { try positive($0, "minutes") }
            session.strict = try fields["strict"]?.bool() ?? false
            guard session.stop != nil || session.minutes != nil else { throw entry.error("a session ends: give it minutes, a stop action, or both") }
            return session
        } ?? []
        return locked
    }

    private static func parseWindow(_ entry: YAMLValue) throws -> Window {
        let fields = try entry.uniqueMapping(allowed: ["name", "start", "end", "days", "dates", "strict"])
        func time(_ key: String) throws -> Int {
            guard let value = fields[key] else { throw entry.error("a window needs a \(key), a local time like \"22:30\"") }
            guard let time = LocalDateTime.timeOfDay(try value.string()) else { throw value.error("expected a local time like \"22:30\"") }
            return time.hour * 3600 + time.minute * 60 + time.second
        }
        var window = Window(start: try time("start"), end: try time("end"))
        window.name = try fields["name"]?.string()
        window.strict = try fields["strict"]?.bool() ?? false
        if let days = fields["days"] {
            window.weekdays = Set(try days.list().map { day in
                let word = try day.string().lowercased()
                guard let index = Self.weekdayFullNames.firstIndex(where: { $0.hasPrefix(word) && word.count >= 3 }) else {
                    throw day.error("expected a weekday (mon, tue, wed, thu, fri, sat, sun), got '\(word)'")
                }
                return index
            })
        }
        if let dates = fields["dates"] {
            window.dates = Set(try dates.list().map { date in
                let text = try date.string()
                guard LocalDateTime(parsing: text + "T00:00") != nil else { throw date.error("expected a date like 2026-12-24, got '\(text)'") }
                return text
            })
        }
        return window
    }

    /// Weekday names from Sunday, as `Calendar` numbers them less one (`mon`, `monday` and `Mon` all read).
    static let weekdayFullNames = ["sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"]

    private static func parseUnlock(_ entry: YAMLValue) throws -> Unlock {
        let fields = try entry.uniqueMapping(allowed: ["habits", "appAction", "minutes"])
        guard let minutes = fields["minutes"] else { throw entry.error("an unlock lasts some minutes: minutes") }
        let earned: Unlock.Earned
        switch (fields["habits"], fields["appAction"]) {
        case (let habits?, nil): earned = .habits(try positive(habits, "habits"))
        case (nil, let action?): earned = .appAction(try actionName(action))
        default: throw entry.error("an unlock is earned by `habits: N` or by an `appAction`, one of the two")
        }
        return Unlock(earned: earned, minutes: try positive(minutes, "minutes"))
    }

    private static func parsePass(_ entry: YAMLValue) throws -> Pass {
        let fields = try entry.uniqueMapping(allowed: ["button", "minutes", "for", "targets", "cap", "capPer"])
        guard let button = fields["button"], let minutes = fields["minutes"] else { throw entry.error("a pass needs its shield button and its minutes") }
        var pass = Pass(button: try button.oneOf(ShieldButton.self), minutes: try positive(minutes, "minutes"))
        if let scope = fields["for"] {
            switch try scope.string() {
            case "target": pass.forProduct = false
            case "product": pass.forProduct = true
            default: throw scope.error("expected target (the app whose shield it was) or product (every target)")
            }
        }
        if let targets = fields["targets"] {
            switch try targets.string() {
            case "apps": pass.appsOnly = true
            case "all": pass.appsOnly = false
            default: throw targets.error("expected apps or all")
            }
        }
        pass.cap = try fields["cap"].map { try positive($0, "cap") }
        pass.capPer = try fields["capPer"]?.oneOf(Pass.CapPeriod.self) ?? .window
        return pass
    }

    private static func parseOverride(_ entry: YAMLValue) throws -> Override {
        let fields = try entry.uniqueMapping(allowed: ["appAction", "effect", "minutes"])
        guard let action = fields["appAction"], let effect = fields["effect"] else { throw entry.error("an override needs its appAction and its effect") }
        let name = try actionName(action)
        switch try effect.string() {
        case "skip-window": return Override(appAction: name, effect: .skipWindow)
        case "end-window": return Override(appAction: name, effect: .endWindow)
        case "pause":
            guard let minutes = fields["minutes"] else { throw entry.error("a pause lasts some minutes: minutes") }
            return Override(appAction: name, effect: .pause(minutes: try positive(minutes, "minutes")))
        default: throw effect.error("expected skip-window, end-window or pause")
        }
    }

    private static func positive(_ value: YAMLValue, _ key: String) throws -> Int {
        let number = try value.int()
        guard number > 0 else { throw value.error("\(key) must be a positive whole number, got \(number)") }
        return number
    }

    /// An app action's name: what `appAction:` in a scenario and `shieldbus do app-action` send.
    private static func actionName(_ value: YAMLValue) throws -> String {
        let name = try value.string()
        guard !name.isEmpty, name.count <= 64, name.allSatisfy({ $0.isLetter || $0.isNumber || "-_.".contains($0) }) else {
            throw value.error("an app action is a short name of letters, digits, '-', '_' or '.', got '\(name)'")
        }
        return name
    }
}

extension Promise.Override.Effect {
    public var isWindowEffect: Bool {
        switch self {
        case .skipWindow, .endWindow: return true
        case .pause: return false
        }
    }
}
