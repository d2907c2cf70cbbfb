import CProcessControl

/// How much freed memory the report builder's heap keeps instead of handing it back to the kernel.
///
/// With glibc's defaults, every recorded event makes the heap's top grow and shrink: in each App-Group write
/// transaction SQLite allocates and frees its working memory, and once more than 128 KiB lies free at the top of the
/// heap glibc returns it (`brk`), to ask for it again at the next event: a churn (`brk`, `sysmalloc`, `munmap`) that
/// shows in the report builder's CPU (docs/benchmarks.md, "Turns and commits"). Keeping up to
/// 1 MiB free (and serving blocks below that size from the heap rather than from maps of their own, which glibc
/// would as well map and unmap per event) ends it for a bounded amount of memory.
enum FreedMemoryRetention {
    /// What the heap may keep free, and the size from which a block gets a map of its own.
    static let bytes: Int32 = 1 << 20

    /// Sets the thresholds; called first thing, before the plugin opens its store.
    static func apply() {
        // glibc refuses only values beyond its limits (32 MiB for maps); 1 MiB is within them, so a refusal is a bug.
        precondition(shieldbus_keep_freed_heap(bytes) == 1, "glibc refused a heap threshold of \(bytes) bytes")
    }
}
