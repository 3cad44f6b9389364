/// The executor the simulations' jobs believe they run on: a job enqueued on it (a task that
/// resumes where it was) goes back into the running simulation's queue. One for the process:
/// a task suspended when its run ended keeps a reference to it that it does not own, and may
/// resume long after. With no simulation running, the job goes to the global executor.
final class SimulationExecutor: SerialExecutor, @unchecked Sendable {
    static let shared = SimulationExecutor()

    private init() {}

    func enqueue(_ job: consuming ExecutorJob) {
        guard let simulation = Simulation.current else {
            globalConcurrentExecutor.enqueue(job)
            return
        }
        simulation.enqueue(UnownedJob(job), main: false)
    }

    func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }
}
