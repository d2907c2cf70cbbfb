import Foundation

/// Sends this process's standard error to a file while a broker runs, so its info-level start/stop log lines
/// (it logs through swift-log's default handler, which this target cannot configure) stay out of the table.
final class StandardErrorCapture {
    let path: String
    private var saved: Int32 = -1

    init(path: String) { self.path = path }

    func begin() {
        guard saved < 0 else { return }
        let file = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard file >= 0 else { return }
        fflush(nil)
        saved = dup(STDERR_FILENO)
        dup2(file, STDERR_FILENO)
        close(file)
    }

    func end() {
        guard saved >= 0 else { return }
        fflush(nil)
        dup2(saved, STDERR_FILENO)
        close(saved)
        saved = -1
    }
}
