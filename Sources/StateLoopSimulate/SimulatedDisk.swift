import StateLoopSync
import Synchronization

/// What a device's disk holds for its app's mutation store: the queue and the confirmed value
/// as last saved. A kill is instant: what the killed launch saves after it is never written,
/// and the next launch reads what was saved before it. A store may keep the queue alone, as
/// `MutationStore`'s defaults do: then a launch has no value to show until the server answers.
final class SimulatedDisk: Sendable {
    /// Whether the store keeps the confirmed value as well as the queue.
    let keepsValue: Bool

    init(keepsValue: Bool) {
        self.keepsValue = keepsValue
    }

    private struct Contents {
        var queue: [PendingMutation<Append>] = []
        var confirmed: Versioned<[String]>?
        /// Which launch may write: a killed one's saves are dropped.
        var launch = 0
        /// The text of every append a save ever held.
        var everHeld: Set<String> = []
    }

    private let contents = Mutex(Contents())

    /// The store of the launch running now.
    func store() -> Store {
        Store(disk: self, launch: contents.withLock { $0.launch })
    }

    /// Kills the running launch: nothing it saves from now on is kept.
    func kill() {
        contents.withLock { $0.launch += 1 }
    }

    /// The text of every append a save ever held: what a launch must not lose.
    var everHeld: Set<String> {
        contents.withLock { $0.everHeld }
    }

    /// One launch's mutation store on the disk.
    struct Store: MutationStore {
        let disk: SimulatedDisk
        let launch: Int

        func load() async throws -> [PendingMutation<Append>] {
            disk.contents.withLock { $0.queue }
        }

        func save(_ queue: [PendingMutation<Append>]) async throws {
            disk.contents.withLock { contents in
                guard contents.launch == launch else { return }
                contents.queue = queue
                contents.everHeld.formUnion(queue.map(\.mutation.text))
            }
        }

        func loadConfirmed() async throws -> Versioned<[String]>? {
            disk.contents.withLock { $0.confirmed }
        }

        func saveConfirmed(_ value: Versioned<[String]>) async throws {
            disk.contents.withLock { contents in
                guard contents.launch == launch, disk.keepsValue else { return }
                contents.confirmed = value
            }
        }
    }
}
