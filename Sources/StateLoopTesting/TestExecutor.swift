import DequeModule
import Foundation

/// A serial executor that is also a task executor, so that a test system and all of its effects
/// run through one queue, and that can tell when that queue has run dry.
///
/// Why: an effect that waits on a ``TestClock`` or on a fake is idle, and the test can only go on
/// deterministically once every effect has reached such a wait. The executor knows that moment
/// exactly (no job queued, none running), so ``settle()`` needs no real-clock sleeps or yields.
///
/// Threading: jobs run one at a time on a worker thread that the executor starts when work
/// arrives and that ends after a while without work. The queue, the flags and the waiters are
/// guarded by `condition`.
///
/// Lifetime: tasks refer to their executor without owning it, so an executor is never freed;
/// each one is kept in `TestExecutor.all`. It costs a few hundred bytes, and no thread once idle.
final class TestExecutor: SerialExecutor, TaskExecutor, @unchecked Sendable {
    private let condition = NSCondition()
    private var jobs = Deque<UnownedJob>()
    private var isRunningJob = false
    private var hasWorker = false
    private var idleWaiters: [CheckedContinuation<Void, Never>] = []

    private static let all = Keeper()

    init() {
        Self.all.keep(self)
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        if hasWorker {
            condition.signal()
        } else {
            hasWorker = true
            startWorker()
        }
        condition.unlock()
    }

    func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    /// Returns once no job is queued or running: every task that uses this executor is
    /// suspended or finished.
    func settle() async {
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            condition.lock()
            if jobs.isEmpty && !isRunningJob {
                condition.unlock()
                waiter.resume()
            } else {
                idleWaiters.append(waiter)
                condition.unlock()
            }
        }
    }

    private func startWorker() {
        let thread = Thread { [self] in runJobs() }
        thread.name = "StateLoopTesting.TestExecutor"
        thread.start()
    }

    private func runJobs() {
        condition.lock()
        while true {
            if let job = jobs.popFirst() {
                isRunningJob = true
                condition.unlock()
                job.runSynchronously(
                    isolatedTo: asUnownedSerialExecutor(),
                    taskExecutor: asUnownedTaskExecutor()
                )
                condition.lock()
                isRunningJob = false
                continue
            }
            if !idleWaiters.isEmpty {
                // Resumed outside the lock: resuming may enqueue a job here at once.
                let waiters = idleWaiters
                idleWaiters = []
                condition.unlock()
                for waiter in waiters {
                    waiter.resume()
                }
                condition.lock()
                continue
            }
            // An idle worker ends after a while, so idle executors cost no thread. This timeout
            // only decides when the thread exits; no test outcome depends on it.
            if !condition.wait(until: Date(timeIntervalSinceNow: 2)) && jobs.isEmpty {
                hasWorker = false
                condition.unlock()
                return
            }
        }
    }

    /// Keeps every executor alive: tasks only hold an unowned reference to their executor.
    private final class Keeper: @unchecked Sendable {
        private let lock = NSLock()
        private var executors: [TestExecutor] = []

        func keep(_ executor: TestExecutor) {
            lock.lock()
            executors.append(executor)
            lock.unlock()
        }
    }
}
