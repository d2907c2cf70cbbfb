import ArgumentParser

extension ShieldBus {
    /// `shieldbus plugin new NAME --kind …` (being written).
    struct Plugin: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Create new plugins (being written).")
    }
}
