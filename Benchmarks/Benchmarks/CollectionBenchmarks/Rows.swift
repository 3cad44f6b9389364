import Foundation
@_spi(Benchmarks) import StateLoopCollections
import StateLoopWire

/// The rows every collection benchmark uses: tasks of about 200 bytes of JSON each, in 10
/// projects, a tenth of them done.
struct TaskRow: Codable, Sendable, Hashable {
    var id: String
    var projectID: String
    var title: String
    var position: Int
    var done: Bool

    static let collection = RowCollection("tasks", of: TaskRow.self) { $0.id }
        .field("projectID") { $0.projectID }
        .field("position") { $0.position }
        .field("done") { $0.done }

    /// Row `index` of the benchmarks' collection.
    static func numbered(_ index: Int) -> TaskRow {
        TaskRow(
            id: String(format: "task-%06d", index), projectID: "p\(index % 10)",
            title: "Task \(index): " + String(repeating: "x", count: 110), position: index, done: index % 10 == 0)
    }

    /// The open tasks, by position: the live query of the benchmarks (indexed, sorted, and
    /// selecting nine rows in ten).
    static let open = RowQuery(where: [.init("done", equals: .bool(false))], orderedBy: [.init("position")])
}

/// The benchmarks change rows only through differences: no mutations.
struct NoMutation: RowMutation {
    func apply(to rows: inout RowEdits<TaskRow>) {}
}

extension LocalStore {
    /// A store holding `count` rows, as one subscription's whole result.
    static func filled(_ count: Int, path: String? = nil) throws -> (LocalStore, LocalCollection<TaskRow, NoMutation>) {
        let store = try path.map { try LocalStore(path: $0) } ?? LocalStore.inMemory()
        let tasks = store.collection(TaskRow.collection, mutations: NoMutation.self)
        let rows = (0..<count).map { VersionedRow(id: TaskRow.numbered($0).id, version: Version(epoch: 1, counter: 1), value: TaskRow.numbered($0)) }
        try tasks.record("all")
        try tasks.apply(RowsDifference(cookie: "1.1.00000000000000aa", replace: true, rows: rows, removed: []), requestedWith: nil, to: "all")
        return (store, tasks)
    }
}
