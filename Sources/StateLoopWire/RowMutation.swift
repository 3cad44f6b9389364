/// A change the app makes to a collection's rows: shown at once on top of the rows the server
/// sent, sent to the server in order, and kept on top until every subscription's rows contain
/// it. A change the server refuses is taken off alone; the others are replayed without it.
///
/// Data, like a value's `Mutation`: the queue is kept in the local store across launches
/// (StateLoopCollections), and a server can apply the same type to its rows (see ``RowEdits``):
/// declared once, in a module both sides share.
///
/// ```swift
/// enum TaskMutation: RowMutation {
///     case add(TaskRow)
///     case move(id: String, to: TaskRow.Status)
///
///     func apply(to rows: inout RowEdits<TaskRow>) {
///         switch self {
///         case .add(let task): rows[task.id] = task
///         case .move(let id, let status): rows[id]?.status = status
///         }
///     }
/// }
/// ```
public protocol RowMutation: Codable, Sendable {
    /// The rows it changes.
    associatedtype Row: Codable & Sendable

    /// Changes `rows` the way the server is expected to. A function of `rows` alone: a device
    /// replays it every time its rows change, so it reads and writes through `rows`, not
    /// through the collection (which gives the confirmed rows from here, and refuses a change).
    func apply(to rows: inout RowEdits<Row>)
}

/// The rows as a ``RowMutation`` sees them: every row the device holds, with the changes
/// replayed so far; a row set to `nil` is deleted.
///
/// A server replays the app's own mutation type too, over its transaction's rows
/// (StateLoopServer's `ServerTransaction.replay(_:on:)`), and writes what it wrote: one
/// definition of what a change does, on both sides.
public struct RowEdits<Row: Sendable> {
    /// The rows written (or deleted: `nil`), by id.
    public private(set) var written: [String: Row?] = [:]
    private let read: (String) -> Row?

    /// Edits over the rows `read` gives by id (`nil`: none).
    public init(read: @escaping (String) -> Row?) {
        self.read = read
    }

    /// The row `id` as it stands; set it to write it, to `nil` to delete it.
    public subscript(id: String) -> Row? {
        get {
            if let row = written[id] { return row }
            return read(id)
        }
        set {
            written[id] = .some(newValue)
        }
    }
}
