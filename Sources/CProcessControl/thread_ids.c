// The thread ids a process's libraries keep in thread-local storage, found from their ELF symbol tables so that a child
// forked from a template can forget its main thread's: the Swift runtime (`ulock_get_tid`, the owner word of swift_once's
// and the runtime's locks), every copy Synchronization's Mutex emits into the module using it (`_swift_stdlib_gettid`)
// and libdispatch (`__dispatch_tsd`'s first field, the owner word of its own locks) lock with a priority-inheritance futex
// whose word holds the owner's thread id. A fork copies the main thread's cached id, the template's; the child's main
// thread would lock with it, and a second thread that met it on such a lock would be queued by the kernel behind the
// template (or behind no one), while the main thread's unlock is refused as not the owner's: the runtime's spins for
// ever, Synchronization's and libdispatch's trap. Each cache is read again at its next use once it holds 0, its "not read
// yet". libdispatch also bound its main queue to the id it read when it started; its fork hook binds it again.
#define _GNU_SOURCE
#include "process_control.h"
#include <elf.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#if UINTPTR_MAX > 0xffffffffu
#define ELF_SYMBOL_TYPE ELF64_ST_TYPE
#else
#define ELF_SYMBOL_TYPE ELF32_ST_TYPE
#endif

/// The most caches kept (a release program holds one per Swift source file that locks a Mutex, its libraries' among them).
#define MAXIMUM_CACHES 512

static int *caches[MAXIMUM_CACHES];
static int cacheCount = 0;
/// The loaded objects when they were found: the loader's counts of objects loaded and unloaded (dl_phdr_info's
/// dlpi_adds and dlpi_subs: a library loaded since may hold more, one unloaded leaves caches freed), and how many
/// objects had this thread's thread-local block made (one made since may hold more).
struct Loaded {
    unsigned long long adds;
    unsigned long long subs;
    int blocksMade;
};
static struct Loaded foundWhen = {0, 0, 0};

/// The Swift runtime's cache (swift/Threading/Impl/Linux/ulock.h): one per object that links the runtime's threading.
static const char runtimeCache[] = "_ZZN5swift14threading_impl5linux13ulock_get_tidEvE3tid";
/// Synchronization's (its `_swift_stdlib_gettid`, a C inline function every client module emits a copy of): as C names
/// it, and as C++ names it in a module built with C++ interoperability.
static const char synchronizationCache[] = "_swift_stdlib_gettid.tid";
static const char *const synchronizationCacheInCPlusPlus[] = {"_ZZL20_swift_stdlib_gettidvE3tid", "_ZZ20_swift_stdlib_gettidvE3tid"};

/// libdispatch's (src/shims/tsd.h): its thread's `struct dispatch_tsd`, whose first field is the thread's id, read again
/// by `libdispatch_tsd_init` at the next use once it holds 0. Its fork hook, `dispatch_atfork_child`, binds the main queue
/// again to the id its thread then reads (the queue's drain owner, which its run-loop drain and `dispatchPrecondition`
/// check) — and, in the child of a process where libdispatch had started threads, marks every queue unusable; so it is
/// called only while `_dispatch_is_multithreaded` says none were, and a template where some were forks no Swift code.
static const char dispatchCache[] = "__dispatch_tsd";
static const char dispatchForkHook[] = "dispatch_atfork_child";
static const char dispatchThreaded[] = "_dispatch_is_multithreaded";

/// The one libdispatch's, found with the caches (NULL when the program has no libdispatch).
struct Dispatch {
    int *thread;
    void (*forkHook)(void);
    bool (*isMultithreaded)(void);
};
static struct Dispatch dispatch = {NULL, NULL, NULL};

static int isSynchronizationCache(const char *name) {
    if (strncmp(name, synchronizationCache, sizeof synchronizationCache - 1) == 0) return 1;
    for (size_t i = 0; i < sizeof synchronizationCacheInCPlusPlus / sizeof *synchronizationCacheInCPlusPlus; i++) {
        if (strcmp(name, synchronizationCacheInCPlusPlus[i]) == 0) return 1;
    }
    return 0;
}

struct Search {
    pid_t thread;
    int runtimeFound;
    struct Dispatch dispatch;
    int problem;
    char *why;
    unsigned long whySize;
};

/// Whether `length` bytes from `offset` lie within a file of `size` bytes (written so that no sum can wrap).
static bool within(uint64_t offset, uint64_t length, size_t size) { return offset <= size && length <= size - offset; }

static int refuse(struct Search *search, int problem, const char *what, const char *path) {
    search->problem = problem;
    snprintf(search->why, search->whySize, "%s: %s", path, what);
    return 1;  // stops dl_iterate_phdr
}

/// Whether the symbol table `table` (its strings in `strings`) defines `name`.
static int defines(const unsigned char *bytes, const ElfW(Shdr) *table, const ElfW(Shdr) *strings, const char *name) {
    const ElfW(Sym) *symbol = (const ElfW(Sym) *)(bytes + table->sh_offset);
    for (size_t i = 0; i < table->sh_size / sizeof(ElfW(Sym)); i++, symbol++) {
        if (symbol->st_shndx != SHN_UNDEF && symbol->st_name < strings->sh_size &&
            strcmp((const char *)bytes + strings->sh_offset + symbol->st_name, name) == 0) return 1;
    }
    return 0;
}

/// One loaded object's caches: the symbols of its symbol table naming one (their value is their offset in the object's
/// thread-local block, which `block` is for the calling thread), and libdispatch's functions (their value is their
/// offset from `base`, where the object was loaded). An object without a symbol table but with Swift's metadata
/// sections, or libdispatch's fork hook among its exported symbols, cannot be read, and refuses: one of its files may
/// keep the id. `path` names it in what is said.
static int searchObject(struct Search *search, const char *opened, const char *path, ElfW(Addr) base, unsigned char *block,
                        size_t blockSize) {
    int file = open(opened, O_RDONLY | O_CLOEXEC);
    struct stat status;
    if (file < 0 || fstat(file, &status) != 0 || (size_t)status.st_size < sizeof(ElfW(Ehdr))) {
        if (file >= 0) close(file);
        return refuse(search, file < 0 ? errno : ENOEXEC, "cannot be read for its thread-local symbols", path);
    }
    unsigned char *bytes = mmap(NULL, (size_t)status.st_size, PROT_READ, MAP_PRIVATE, file, 0);
    close(file);
    if (bytes == MAP_FAILED) return refuse(search, errno, "cannot be mapped for its thread-local symbols", path);
    size_t size = (size_t)status.st_size;
    const ElfW(Ehdr) *header = (const ElfW(Ehdr) *)bytes;
    int stop = 0;
    if (memcmp(header->e_ident, ELFMAG, SELFMAG) != 0 || header->e_shentsize != sizeof(ElfW(Shdr)) ||
        !within(header->e_shoff, (uint64_t)header->e_shnum * sizeof(ElfW(Shdr)), size) || header->e_shstrndx >= header->e_shnum) {
        stop = refuse(search, ENOEXEC, "has no section headers to find its thread-local symbols", path);
        goto done;
    }
    const ElfW(Shdr) *sections = (const ElfW(Shdr) *)(bytes + header->e_shoff);
    const ElfW(Shdr) *names = &sections[header->e_shstrndx];
    const ElfW(Shdr) *symbols = NULL, *exported = NULL;
    int swift = 0;
    for (int i = 0; i < header->e_shnum; i++) {
        if (sections[i].sh_type == SHT_SYMTAB) symbols = &sections[i];
        if (sections[i].sh_type == SHT_DYNSYM && sections[i].sh_link < header->e_shnum && within(sections[i].sh_offset, sections[i].sh_size, size) &&
            within(sections[sections[i].sh_link].sh_offset, sections[sections[i].sh_link].sh_size, size)) exported = &sections[i];
        if (sections[i].sh_name < names->sh_size && within(names->sh_offset, names->sh_size, size) &&
            strncmp((const char *)bytes + names->sh_offset + sections[i].sh_name, "swift5_", 7) == 0) swift = 1;
    }
    if (!symbols) {
        if (swift) stop = refuse(search, ENOENT, "is Swift with thread-local storage but no symbol table (stripped)", path);
        else if (exported && defines(bytes, exported, &sections[exported->sh_link], dispatchForkHook)) {
            stop = refuse(search, ENOENT, "is libdispatch but has no symbol table (stripped)", path);
        }
        goto done;
    }
    if (symbols->sh_link >= header->e_shnum || !within(symbols->sh_offset, symbols->sh_size, size)) {
        stop = refuse(search, ENOEXEC, "has a symbol table out of its bounds", path);
        goto done;
    }
    const ElfW(Shdr) *strings = &sections[symbols->sh_link];
    if (!within(strings->sh_offset, strings->sh_size, size)) {
        stop = refuse(search, ENOEXEC, "has a string table out of its bounds", path);
        goto done;
    }
    const ElfW(Sym) *symbol = (const ElfW(Sym) *)(bytes + symbols->sh_offset);
    const char *text = (const char *)bytes + strings->sh_offset;
    int threadLocals = 0;
    struct Dispatch found = {NULL, NULL, NULL};
    for (size_t i = 0; i < symbols->sh_size / sizeof(ElfW(Sym)); i++, symbol++) {
        if (symbol->st_shndx == SHN_UNDEF || symbol->st_name >= strings->sh_size) continue;
        const char *name = text + symbol->st_name;
        if (ELF_SYMBOL_TYPE(symbol->st_info) == STT_FUNC) {
            if (strcmp(name, dispatchForkHook) == 0) found.forkHook = (void (*)(void))(base + symbol->st_value);
            if (strcmp(name, dispatchThreaded) == 0) found.isMultithreaded = (bool (*)(void))(base + symbol->st_value);
            continue;
        }
        if (ELF_SYMBOL_TYPE(symbol->st_info) != STT_TLS) continue;
        if (symbol->st_size > 0) threadLocals++;  // (markers such as `_end` may be typed thread-local, sized 0)
        int runtime = strcmp(name, runtimeCache) == 0;
        int fromDispatch = strcmp(name, dispatchCache) == 0;
        if (!runtime && !fromDispatch && !isSynchronizationCache(name)) continue;
        int *cache = (int *)(block + (symbol->st_value <= blockSize - sizeof(int) ? symbol->st_value : 0));
        // Read now, by the one thread: 0 (not read yet) or this thread's id, or the symbol is not the cache it names
        // (libdispatch's is a structure that starts with it).
        if ((fromDispatch ? symbol->st_size < sizeof(int) : symbol->st_size != sizeof(int)) || symbol->st_value > blockSize - sizeof(int) ||
            (*cache != 0 && *cache != search->thread)) {
            stop = refuse(search, EPROTO, "has a thread-id cache outside its thread-local block or not holding this thread's id", path);
            goto done;
        }
        if (fromDispatch) {
            found.thread = cache;
            continue;
        }
        if (cacheCount == MAXIMUM_CACHES) {
            stop = refuse(search, E2BIG, "has more thread-id caches than the template keeps", path);
            goto done;
        }
        caches[cacheCount++] = cache;
        search->runtimeFound |= runtime;
    }
    if (found.thread || found.forkHook || found.isMultithreaded) {
        if (!found.thread || !found.forkHook || !found.isMultithreaded) {
            stop = refuse(search, ENOENT, "is libdispatch but its thread id (__dispatch_tsd), fork hook (dispatch_atfork_child) or "
                                          "_dispatch_is_multithreaded cannot be found", path);
            goto done;
        }
        if (search->dispatch.thread) {
            stop = refuse(search, EEXIST, "holds a second libdispatch", path);
            goto done;
        }
        search->dispatch = found;
    }
    // Thread-local storage that no sized symbol names: its local symbols were stripped (`strip --discard-all`), the
    // caches among them.
    if (swift && threadLocals == 0) stop = refuse(search, ENOENT, "is Swift with thread-local storage but its local symbols stripped", path);
done:
    munmap(bytes, size);
    return stop;
}

static int searchLoaded(struct dl_phdr_info *info, size_t size, void *context) {
    (void)size;
    struct Search *search = context;
    size_t blockSize = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        if (info->dlpi_phdr[i].p_type == PT_TLS) blockSize = info->dlpi_phdr[i].p_memsz;
    }
    // No thread-local storage, or none made for this thread yet (a later one starts from the object's zeros).
    if (blockSize < sizeof(int) || info->dlpi_tls_data == NULL) return 0;
    if (info->dlpi_name && info->dlpi_name[0]) {
        return searchObject(search, info->dlpi_name, info->dlpi_name, info->dlpi_addr, info->dlpi_tls_data, blockSize);
    }
    // The program (the loader names it ""): read through /proc, named by its path.
    char program[4096];
    ssize_t length = readlink("/proc/self/exe", program, sizeof program - 1);
    program[length > 0 ? length : 0] = 0;
    return searchObject(search, "/proc/self/exe", length > 0 ? program : "the program", info->dlpi_addr, info->dlpi_tls_data, blockSize);
}

static int readLoaded(struct dl_phdr_info *info, size_t size, void *context) {
    (void)size;
    struct Loaded *loaded = context;
    loaded->adds = info->dlpi_adds;
    loaded->subs = info->dlpi_subs;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        if (info->dlpi_phdr[i].p_type == PT_TLS && info->dlpi_phdr[i].p_memsz >= sizeof(int) && info->dlpi_tls_data != NULL) loaded->blocksMade++;
    }
    return 0;
}

/// Refuses a fork after libdispatch started threads (its worker pool, even ended since): its hook would leave the child's
/// queues unusable, and without it the main queue stays bound to the template's id.
static int refuseIfDispatchThreaded(char *why, unsigned long size) {
    if (!dispatch.isMultithreaded || !dispatch.isMultithreaded()) return 0;
    snprintf(why, size, "libdispatch started threads of its own in this process, so a forked child's queues cannot be used");
    errno = EDEADLK;
    return -1;
}

int shieldbus_find_thread_ids(char *why, unsigned long size) {
    struct Loaded loaded = {0, 0, 0};
    dl_iterate_phdr(readLoaded, &loaded);
    if (cacheCount > 0 && loaded.adds == foundWhen.adds && loaded.subs == foundWhen.subs && loaded.blocksMade == foundWhen.blocksMade) {
        return refuseIfDispatchThreaded(why, size) < 0 ? -1 : cacheCount;
    }
    struct Search search = {.thread = (pid_t)syscall(SYS_gettid), .why = why, .whySize = size};
    cacheCount = 0;
    dispatch = (struct Dispatch){NULL, NULL, NULL};
    if (size > 0) why[0] = 0;
    dl_iterate_phdr(searchLoaded, &search);
    if (search.problem == 0 && !search.runtimeFound) {
        search.problem = ENOENT;
        snprintf(why, size, "no Swift runtime thread-id cache (%s) in the program or its libraries", runtimeCache);
    }
    if (search.problem != 0) {
        cacheCount = 0;
        errno = search.problem;
        return -1;
    }
    dispatch = search.dispatch;
    if (refuseIfDispatchThreaded(why, size) < 0) {
        cacheCount = 0;
        dispatch = (struct Dispatch){NULL, NULL, NULL};
        return -1;
    }
    foundWhen = loaded;
    return cacheCount;
}

void shieldbus_forget_thread_ids(void) {
    for (int i = 0; i < cacheCount; i++) *caches[i] = 0;
    // A libdispatch that read no id (a release launch's, whose constructor runs after the template's) bound nothing yet.
    if (dispatch.thread && *dispatch.thread != 0) {
        if (dispatch.isMultithreaded()) {
            // Both templates refuse to fork such a libdispatch (`shieldbus_find_thread_ids`, just before each fork): a
            // child here would keep the template's id, and its fork hook would make every queue unusable. It ends
            // now, saying why, rather than trap later in a lock.
            static const char said[] = "shieldbus: a child was forked from a template whose libdispatch had started threads: it cannot run\n";
            ssize_t written = write(STDERR_FILENO, said, sizeof said - 1);
            (void)written;
            _exit(70);
        }
        *dispatch.thread = 0;
        dispatch.forkHook();
    }
}
