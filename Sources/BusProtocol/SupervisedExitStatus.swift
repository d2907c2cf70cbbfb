/// The exit statuses by which a supervised plugin's process tells its supervisor whether starting it again can help
/// (protocol.md, "Supervision"): the SDK exits with them, the broker acts on them, a journal's judge reads them.
public enum SupervisedExitStatus {
    /// sysexits' EX_CONFIG: the plugin's configuration is wrong; it is marked failed at once, not restarted.
    public static let configurationError: Int32 = 78
    /// sysexits' EX_TEMPFAIL: the plugin's storage cannot be used now (a full or read-only disk); it is started again
    /// until it can, and the exits are not a crash.
    public static let storageUnavailable: Int32 = 75
}
