// UnsavedStateRetry: what device.sqlite could not take (a full or read-only disk) is tried again until it is saved.

extension DeviceOS {
    /// What could not be saved is tried again every second of wall time until it is saved — not only with the next
    /// change, which may come long after the disk has room again (a crash meanwhile would lose it).
    func retryUnsavedSoon() {
        guard !retryingUnsaved else { return }
        retryingUnsaved = true
        _ = bus.afterWallTime(milliseconds: Self.unsavedRetryMilliseconds) { [unowned self] in
            retryingUnsaved = false
            if state.hasUnsaved {
                do {
                    try state.saveUnsaved()
                    logger.notice("saved what \(state.path) could not take before")
                } catch {
                    return retryUnsavedSoon()  // still failing: said once already, tried again quietly
                }
            }
            // Saved now (here, or by a save since): a shield change that waited for it takes effect.
            managedSettings.enforceSaved()
        }
    }
    static let unsavedRetryMilliseconds: Int64 = 1_000
}
