import ArgumentParser

extension ShieldBus {
    /// `shieldbus state list|get|set|watch` (being written).
    struct State: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Inspect the App-Group stores (being written).")
    }
}
