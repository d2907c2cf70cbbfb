import ArgumentParser

extension ShieldBus {
    /// `shieldbus report daily|weekly` (being written).
    struct Report: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Usage reports (being written).")
    }
}
