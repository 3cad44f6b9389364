import Foundation
import StateLoopInspector
import StateLoopInspectorWire
import StateLoopServer

extension Inspector {
    /// Records what `server` does, under `name`, so that the inspector shows the backend beside
    /// its apps on one timeline: each request answered (route, status, duration, its principal
    /// reflected and redacted, its `Mutation-ID` and `Client-ID`, the key it read or changed),
    /// each mutation's outcome (applied at a version, refused with the reason, repeated,
    /// failed), each commit with the keys and versions it wrote and the mutation it applied,
    /// each value's fan-out (the sockets it was queued to, coalesced for or dropped by), each
    /// push socket opened and closed (and why), and each principal whose sessions ended.
    ///
    /// The page links a client's records to these by their mutation ids and versions: the
    /// request that carried a mutation, the commit that applied it, the pushes that told the
    /// other clients and the value each of them then showed.
    ///
    /// Cost: nothing while no inspector watches (one atomic load where each report would be
    /// made). Watched, each report keeps a closure in the inspector's bounded buffer on the
    /// thread that did the work; the record is built, reflected, redacted and sent later by the
    /// inspector's connection. A fan-out is one record per value, whatever its number of
    /// sockets (the first 20 named).
    ///
    /// The watch holds neither the server nor the inspector, and ends when the inspector goes.
    /// Watch each instance with its own inspector (its own app name) when several run: each is
    /// a source of its own on the page. Off by default: an app opts in, as Nightride's server
    /// does with `--inspect`, only where an inspector is meant to listen.
    ///
    /// - Parameters:
    ///   - server: The server watched.
    ///   - name: The name its records carry (their system), as the page shows it.
    public func watch<Access>(_ server: SyncServer<Access>, named name: String = "server") {
        let observers = server.activity
        let id = observers.add { [weak self] activity in
            guard let self else { return }
            let (kind, build) = ServerRecords.record(of: activity)
            keep(kind, system: name, build: build)
        }
        // Waits for the inspector's end (which cancels its watches) to stop the reports.
        let task = Task.detached { [weak observers] in
            let never = AsyncStream<Never> { _ in }
            for await _ in never {}
            observers?.remove(id)
        }
        keepWatches([task])
    }
}
