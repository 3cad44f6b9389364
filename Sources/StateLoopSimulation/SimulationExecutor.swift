/// The executor a simulation's jobs believe they run on: a job enqueued on it (a task that
/// resumes where it was) goes back into the simulation's queue, never to a thread.
final class SimulationExecutor: SerialExecutor, @unchecked Sendable {
    /// Set once, before the first job runs.
    weak var simulation: Simulation?

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        if let simulation {
            simulation.enqueue(job, main: false)
        } else {
            // The simulation is over: the job runs where any other would.
            job.runSynchronously(on: asUnownedSerialExecutor())
        }
    }

    func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }
}
