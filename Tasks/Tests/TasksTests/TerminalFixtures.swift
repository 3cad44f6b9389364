import TasksModel
import TasksTerminal

/// Boards and helpers for the terminal client's tests.
enum TerminalFixtures {
    /// p1's tasks: two to do, one doing, one done.
    static let tasks = [
        TaskItem(id: "t1", projectID: "p1", title: "write docs", status: .todo, assignee: "ann", priority: 1, position: 1),
        TaskItem(id: "t2", projectID: "p1", title: "fix bug", status: .todo, position: 2),
        TaskItem(id: "t3", projectID: "p1", title: "review", status: .doing, assignee: "bob", priority: 3, position: 3),
        TaskItem(id: "t4", projectID: "p1", title: "ship", status: .done, position: 4),
    ]

    static let projects = [Project(id: "p1", name: "Launch"), Project(id: "p2", name: "Ops")]

    /// ann's board, her projects and p1's tasks delivered.
    static func board(tasks: [TaskItem] = tasks) -> BoardState {
        var state = BoardState(user: "ann")
        state = state.after(.projects(projects))
        return state.after(.tasks(tasks, generation: state.generation))
    }
}

extension BoardState {
    /// The state after `events`, effects dropped.
    func after(_ events: BoardEvent...) -> BoardState {
        events.reduce(self) { BoardCore.reduce($0, $1).0 }
    }

    /// The state after each key of `keys`, and every effect they asked for.
    func pressing(_ keys: Key...) -> (BoardState, [BoardEffect]) {
        pressing(keys)
    }

    /// The state after each key of `keys`, and every effect they asked for.
    func pressing(_ keys: [Key]) -> (BoardState, [BoardEffect]) {
        keys.reduce((self, [])) { sofar, key in
            let (state, effects) = BoardCore.reduce(sofar.0, .key(key))
            return (state, sofar.1 + effects)
        }
    }

    /// The rows of the board as the device would show them after `effects`' mutations,
    /// delivered to the core: what the live query does in the app.
    func delivering(_ effects: [BoardEffect]) -> BoardState {
        var rows = tasks
        for case .mutate(let mutation) in effects {
            var edits = [String: TaskItem]()
            for row in rows { edits[row.id] = row }
            switch mutation {
            case .move(let id, let status, let position):
                edits[id]?.status = status
                edits[id]?.position = position
            case .rename(let id, let title): edits[id]?.title = title
            case .assign(let id, let user): edits[id]?.assignee = user
            case .prioritize(let id, let priority): edits[id]?.priority = priority
            default: break
            }
            rows = edits.values.sorted { $0.position < $1.position }
        }
        return after(.tasks(rows, generation: generation))
    }
}
