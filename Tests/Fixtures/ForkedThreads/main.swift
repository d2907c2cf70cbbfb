// fixture-forked-threads: a second thread meets the main thread on one of the Swift runtime's locks, in a process forked
// from another whose main thread had locked before (a template's launch, or a fork of its own).
//
//   fixture-forked-threads MEETING                       meet in this process (what a launch from a template runs)
//   fixture-forked-threads --fork HOW DEADLINE MEETING   lock here, fork (HOW: `plain`, or `forgetting` the thread ids
//                                                        as the templates do), meet in the child; says `finished`,
//                                                        `trapped SIGNAL` or `hung` (killed after DEADLINE ms)
//   fixture-forked-threads --find-after-dispatch-threads  runs a block on `DispatchQueue.global()` (libdispatch starts a
//                                                        thread), then says what finding the thread ids says
// MEETING: `once` (a thread reads a global the main thread is making: swift_once), `mutex` (Synchronization's Mutex the
// main thread holds), `dispatch` (the global's meeting, from a block on `DispatchQueue.global()`), `specifics`
// (libdispatch's own lock, a queue's specific values': both threads read them until each has waited for the other),
// `main-queue` (a thread runs a block on `DispatchQueue.main` with `sync`, which the main run loop drains).
// In the first three the main thread lets the lock go only once the other thread is in the kernel waiting for it, so
// they always meet; libdispatch's lock is held only inside libdispatch, so `specifics` reads until they have met.
import CProcessControl
import Dispatch
import Foundation
import ShieldBusSDK
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The other thread's id, once it runs.
nonisolated(unsafe) var otherThread: Int32 = 0
let otherStarted = DispatchSemaphore(value: 0)
let otherDone = DispatchSemaphore(value: 0)

/// The futex call's number (glibc's SYS_futex, which Swift does not import).
#if arch(x86_64)
let futexCall = "202"
#else
let futexCall = "98"  // arm64's, and the other architectures' generic table
#endif

/// RUSAGE_THREAD (a GNU extension, which Swift does not import): getrusage's figures of the calling thread.
let rusageThread: Int32 = 1

/// FUTEX_LOCK_PI, without the private flag: the wait of every lock the meetings take.
let lockPriorityInheriting: UInt64 = 6

/// Waits until the thread `id` waits in the kernel for a priority-inheritance lock (a futex call whose operation is
/// FUTEX_LOCK_PI: not any futex call, such as the wake of `otherStarted` the thread makes just before), at most 10 s:
/// whichever comes first, the main thread then lets go.
func awaitInTheKernel(_ id: Int32) {
    let end = DispatchTime.now().uptimeNanoseconds + 10_000_000_000
    while DispatchTime.now().uptimeNanoseconds < end {
        if let call = try? String(contentsOfFile: "/proc/self/task/\(id)/syscall", encoding: .utf8) {
            // `number address operation …`, the arguments in hexadecimal.
            let fields = call.split(separator: " ")
            if fields.count > 2, fields[0] == futexCall,
               let operation = UInt64(fields[2].dropFirst(2), radix: 16), operation & 0x7f == lockPriorityInheriting { return }
        }
        sched_yield()
    }
}

/// Runs `body` on a thread of its own (a plain pthread: the runtime's locks, not Foundation's, are what meet).
func onAThread(_ body: @escaping () -> Void) {
    final class Box { let body: () -> Void; init(_ body: @escaping () -> Void) { self.body = body } }
    var thread = pthread_t()
    let context = Unmanaged.passRetained(Box(body)).toOpaque()
    let started = pthread_create(&thread, nil, { context in
        Unmanaged<Box>.fromOpaque(context!).takeRetainedValue().body()
        return nil
    }, context)
    precondition(started == 0, "no thread: \(started)")
    pthread_detach(thread)
}

/// The calling thread's id (/proc/thread-self names it: `PID/task/TID`).
func threadID() -> Int32 {
    let link = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self")) ?? ""
    return link.split(separator: "/").last.flatMap { Int32($0) } ?? 0
}

/// The other thread's part: says it runs, meets the main thread in `meet`, says it is done.
func other(_ meet: @escaping @Sendable () -> Void) -> @Sendable () -> Void {
    {
        otherThread = threadID()
        otherStarted.signal()
        meet()
        otherDone.signal()
    }
}

/// Made by the main thread, which starts the other thread inside the making (swift_once holds the global's lock), and
/// lets go only once that thread waits for the same lock.
enum Made {
    static let meetingAThread: Int = {
        onAThread(other { precondition(Made.meetingAThread == 7) })
        otherStarted.wait()
        awaitInTheKernel(otherThread)
        return 7
    }()
    static let meetingADispatchBlock: Int = {
        DispatchQueue.global().async(execute: other { precondition(Made.meetingADispatchBlock == 8) })
        otherStarted.wait()
        awaitInTheKernel(otherThread)
        return 8
    }()
}
let mutex = Mutex(0)

/// A serial queue holding many specific values, so that reading one it does not hold walks them all under
/// libdispatch's lock of its specific values (`dispatch_queue_get_specific`): two threads reading at once meet there.
enum Specifics {
    static let queue = DispatchQueue(label: "fixture-forked-threads.specifics")
    static let missing = DispatchSpecificKey<Int>()
    static let keys: [DispatchSpecificKey<Int>] = {
        let keys = (0..<4_096).map { _ in DispatchSpecificKey<Int>() }
        for (value, key) in keys.enumerated() { queue.setSpecific(key: key, value: value) }
        return keys
    }()

    /// Reads a value the queue does not hold; whether this thread waited meanwhile (a voluntary switch: the only wait
    /// on that path is for libdispatch's lock).
    static func readWaiting() -> Bool {
        var before = rusage(), after = rusage()
        getrusage(rusageThread, &before)
        precondition(queue.getSpecific(key: missing) == nil)
        getrusage(rusageThread, &after)
        return after.ru_nvcsw > before.ru_nvcsw
    }
}
/// How many times each thread waits for the other in `specifics` before they have met (a wait for another cause, a page
/// read from disk on the first reads, is not one).
let waitsToMeet = 4
let otherWaits = Atomic<Int>(0)
let otherStops = Atomic<Bool>(false)
let mainQueueRan = Atomic<Bool>(false)

func meet(_ meeting: String) {
    switch meeting {
    case "once":
        precondition(Made.meetingAThread == 7)
    case "dispatch":
        precondition(Made.meetingADispatchBlock == 8)
    case "mutex":
        mutex.withLock { value in
            onAThread(other { mutex.withLock { $0 += 1 } })
            otherStarted.wait()
            awaitInTheKernel(otherThread)
            value += 1
        }
    case "specifics":
        precondition(Specifics.keys.count > 0)
        onAThread(other {
            while !otherStops.load(ordering: .relaxed) {
                if Specifics.readWaiting() { otherWaits.add(1, ordering: .relaxed) }
            }
        })
        otherStarted.wait()
        var mainWaits = 0
        while mainWaits < waitsToMeet || otherWaits.load(ordering: .relaxed) < waitsToMeet {
            if Specifics.readWaiting() { mainWaits += 1 }
        }
        otherStops.store(true, ordering: .relaxed)
    case "main-queue":
        // The main queue is this thread's: libdispatch checks the thread that drains it, and that a block it runs is on it.
        dispatchPrecondition(condition: .onQueue(.main))
        onAThread(other {
            DispatchQueue.main.sync {
                dispatchPrecondition(condition: .onQueue(.main))
                mainQueueRan.store(true, ordering: .relaxed)
            }
        })
        otherStarted.wait()
        while !mainQueueRan.load(ordering: .relaxed) {
            _ = RunLoop.main.run(mode: .default, before: Date(timeIntervalSinceNow: 1))
        }
    default:
        FileHandle.standardError.write(Data("unknown meeting \(meeting)\n".utf8))
        exit(64)
    }
    otherDone.wait()
}

/// Forks after this thread locked (its ids cached) and meets in the child; says how the child ended by `deadline`.
func forkAndMeet(forgetting: Bool, deadline milliseconds: Int32, _ meeting: String) -> Never {
    mutex.withLock { $0 += 1 }
    // libdispatch's lock of the queue's specific values, taken here: its word named this thread.
    if meeting == "specifics" { precondition(Specifics.keys.count > 0) }
    let unrelated = Mutex(0)
    unrelated.withLock { $0 += 1 }
    var why = [CChar](repeating: 0, count: 512)
    if forgetting, shieldbus_find_thread_ids(&why, UInt(why.count)) < 0 {
        print("cannot find: \(String(cString: why))")
        exit(70)
    }
    fflush(nil)
    let child = fork()
    if child == 0 {
        if forgetting { shieldbus_forget_thread_ids() }
        meet(meeting)
        _exit(0)
    }
    let descriptor = shieldbus_process_descriptor(child)
    var waits = [pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)]
    let ready = poll(&waits, 1, milliseconds)
    var status: Int32 = 0
    if ready == 0 {
        kill(child, SIGKILL)
        waitpid(child, &status, 0)
        print("hung")
    } else {
        waitpid(child, &status, 0)
        let signal = status & 0x7f
        print(signal == 0 && (status >> 8) & 0xff == 0 ? "finished" : signal != 0 ? "trapped \(signal)" : "exited \((status >> 8) & 0xff)")
    }
    exit(0)
}

let arguments = CommandLine.arguments.dropFirst()
if arguments.first == "--find-after-dispatch-threads" {
    DispatchQueue.global().async { otherDone.signal() }
    otherDone.wait()
    var why = [CChar](repeating: 0, count: 512)
    print(shieldbus_find_thread_ids(&why, UInt(why.count)) < 0 ? "cannot find: \(String(cString: why))" : "found")
    exit(0)
}
if arguments.first == "--fork", arguments.count == 4 {
    let words = Array(arguments)
    forkAndMeet(forgetting: words[1] == "forgetting", deadline: Int32(words[2]) ?? 5_000, words[3])
}
meet(arguments.first ?? "once")
print("finished")
