import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The Swift runtime's hooks for enqueueing a job on the global executor and on the main
/// executor, pointed once at the running ``Simulation``: with none running, a job goes where
/// the runtime would send it.
///
/// The hooks are variables the concurrency runtime exports (`swift_task_enqueueGlobal_hook`,
/// `swift_task_enqueueMainExecutor_hook`); each holds a function, called with the job and the
/// runtime's own enqueue, in Swift's calling convention.
enum SimulationHooks {
    typealias Enqueue = @convention(thin) (UnownedJob) -> Void
    typealias Hook = @convention(thin) (UnownedJob, Enqueue) -> Void

    private static let installed: Void = {
        guard let runtime = dlopen(nil, RTLD_NOW) else { fatalError("Simulation: the process's own symbols cannot be read (dlopen)") }
        for (name, main) in [("swift_task_enqueueGlobal_hook", false), ("swift_task_enqueueMainExecutor_hook", true)] {
            guard let address = dlsym(runtime, name) else {
                fatalError("Simulation: this Swift runtime has no \(name); a simulation cannot run on it")
            }
            let hook = address.assumingMemoryBound(to: Hook?.self)
            hook.pointee = main ? enqueueMain : enqueueGlobal
        }
    }()

    /// Points the hooks at the running simulation, once per process.
    static func install() {
        installed
    }

    private static let enqueueGlobal: Hook = { job, original in
        guard let simulation = Simulation.current else { return original(job) }
        simulation.enqueue(job, main: false)
    }

    private static let enqueueMain: Hook = { job, original in
        guard let simulation = Simulation.current else { return original(job) }
        simulation.enqueue(job, main: true)
    }
}
