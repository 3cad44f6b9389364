import TasksModel
import TasksTerminal
import Testing

/// The terminal client's keys and news, through the pure core: no terminal, no server, no
/// clock.
@Suite("Tasks terminal: the core")
struct BoardCoreTests {
    @Test("projects arriving select the first and watch its board; stale deliveries are ignored")
    func firstProjectWatched() {
        let (state, effects) = BoardCore.reduce(BoardState(user: "ann"), .projects(TerminalFixtures.projects))
        #expect(state.projectID == "p1")
        #expect(effects == [.watch(BoardQuery(projectID: "p1"), generation: 1)])
        #expect(!state.loaded)
        let stale = state.after(.tasks(TerminalFixtures.tasks, generation: 0))
        #expect(!stale.loaded && stale.tasks.isEmpty)
        let loaded = state.after(.tasks(TerminalFixtures.tasks, generation: 1))
        #expect(loaded.loaded && loaded.tasks.count == 4)
        #expect(loaded.selectedID == "t1", "the cursor starts on the first task of the first column")
        // The same projects again change nothing.
        #expect(BoardCore.reduce(loaded, .projects(TerminalFixtures.projects)).1.isEmpty)
    }

    @Test("↑/↓ and j/k pick a task in the column, within its ends; Tab and Shift-Tab pick the column")
    func navigation() {
        let board = TerminalFixtures.board()
        #expect(board.pressing(.down).0.selectedID == "t2")
        #expect(board.pressing(.character("j"), .character("j"), .character("j")).0.selectedID == "t2")
        #expect(board.pressing(.down, .up, .character("k")).0.selectedID == "t1")
        let doing = board.pressing(.tab).0
        #expect(doing.column == .doing && doing.selectedID == "t3")
        let done = board.pressing(.tab, .tab).0
        #expect(done.column == .done && done.selectedID == "t4")
        #expect(board.pressing(.tab, .tab, .tab).0.column == .todo, "Tab wraps around")
        #expect(board.pressing(.backTab).0.column == .done)
    }

    @Test("→/l moves the task to the next status, at the end of that column, and the cursor follows it")
    func moveRight() {
        let board = TerminalFixtures.board()
        let (moved, effects) = board.pressing(.right)
        #expect(effects == [.mutate(.move(id: "t1", to: .doing, position: 4))], "after review (3), the last of doing")
        #expect(moved.column == .doing && moved.selectedID == "t1")
        let shown = moved.delivering(effects)
        #expect(shown.selectedTask?.id == "t1" && shown.selectedTask?.status == .doing)
        // Into an empty column, a task keeps its position.
        let (_, intoEmpty) = TerminalFixtures.board(tasks: Array(TerminalFixtures.tasks.prefix(2))).pressing(.character("l"))
        #expect(intoEmpty == [.mutate(.move(id: "t1", to: .doing, position: 1))])
    }

    @Test("←/h moves back; nothing moves past todo or done, nor without a task")
    func moveLeftAndEdges() {
        let board = TerminalFixtures.board()
        #expect(board.pressing(.left).1.isEmpty, "todo is the first status")
        #expect(board.pressing(.tab, .tab, .right).1.isEmpty, "done is the last")
        #expect(board.pressing(.tab, .character("h")).1 == [.mutate(.move(id: "t3", to: .todo, position: 3))])
        let empty = TerminalFixtures.board(tasks: [])
        #expect(empty.pressing(.right, .left, .enter, .down).1.isEmpty)
    }

    @Test("s cycles the status filter and m toggles mine: each makes the board's query again")
    func filters() {
        let board = TerminalFixtures.board()
        let (todo, effects) = board.pressing(.character("s"))
        #expect(todo.statusFilter == .todo && todo.columns == [.todo])
        #expect(effects == [.watch(BoardQuery(projectID: "p1", status: .todo), generation: board.generation + 1)])
        #expect(!todo.loaded && todo.tasks.isEmpty, "the old rows are not shown as the new query's")
        let doing = todo.pressing(.character("s")).0
        #expect(doing.statusFilter == .doing && doing.column == .doing)
        let all = doing.pressing(.character("s"), .character("s")).0
        #expect(all.statusFilter == nil && all.columns == TaskItem.Status.allCases)
        let (mine, mineEffects) = all.pressing(.character("m"))
        #expect(mine.mineOnly)
        #expect(mineEffects == [.watch(BoardQuery(projectID: "p1", assignee: "ann"), generation: all.generation + 1)])
        #expect(mine.pressing(.character("m")).0.query == BoardQuery(projectID: "p1"))
    }

    @Test("the cursor finds its task again when a filter that hid it is undone")
    func cursorThroughFilters() {
        let three = Array(TerminalFixtures.tasks.prefix(3))
        // doing only: the cursor goes to review (t3).
        var state = TerminalFixtures.board(tasks: three).pressing(.character("s"), .character("s")).0
        state = state.after(.tasks([three[2]], generation: state.generation))
        #expect(state.column == .doing && state.selectedID == "t3")
        // done only, which is empty: no task under the cursor.
        state = state.pressing(.character("s")).0
        state = state.after(.tasks([], generation: state.generation))
        #expect(state.column == .done && state.selectedTask == nil)
        // all again: back on review, in doing.
        state = state.pressing(.character("s")).0
        state = state.after(.tasks(three, generation: state.generation))
        #expect(state.column == .doing && state.selectedTask?.id == "t3")
        // mine hides it (it is bob's); everyone's shows it again, the cursor on it.
        state = state.pressing(.character("m")).0
        state = state.after(.tasks([three[0]], generation: state.generation))
        #expect(state.selectedTask == nil)
        state = state.pressing(.character("m")).0
        state = state.after(.tasks(three, generation: state.generation))
        #expect(state.column == .doing && state.selectedTask?.id == "t3")
    }

    @Test("a task moved out of the one status shown leaves the board with a message")
    func moveOutOfTheFilter() {
        var state = TerminalFixtures.board().pressing(.character("s")).0
        state = state.after(.tasks(TerminalFixtures.tasks.filter { $0.status == .todo }, generation: state.generation))
        let (moved, effects) = state.pressing(.right)
        #expect(effects == [.mutate(.move(id: "t1", to: .doing, position: 1))])
        #expect(moved.column == .todo)
        #expect(moved.message?.contains("to doing") == true)
        let shown = moved.after(.tasks([TerminalFixtures.tasks[1]], generation: moved.generation))
        #expect(shown.selectedID == "t2", "the cursor stays in its row")
    }

    @Test("] and [ switch project, wrapping; a project the user leaves gives way to the first")
    func projects() {
        let board = TerminalFixtures.board()
        let (ops, effects) = board.pressing(.character("]"))
        #expect(ops.projectID == "p2")
        #expect(effects == [.watch(BoardQuery(projectID: "p2"), generation: board.generation + 1)])
        #expect(ops.pressing(.character("]")).0.projectID == "p1")
        #expect(board.pressing(.character("[")).0.projectID == "p2")
        let removed = board.after(.projects([TerminalFixtures.projects[1]]))
        #expect(removed.projectID == "p2" && removed.message != nil)
        let none = board.after(.projects([]))
        #expect(none.projectID == nil)
        #expect(BoardCore.reduce(board, .projects([])).1 == [.watch(nil, generation: board.generation + 1)])
        #expect(none.pressing(.character("a")).0.prompt == nil, "no project, nothing to add to")
    }

    @Test("a adds a task to the cursor's column through the line editor; Esc cancels; an empty title is refused")
    func addTask() {
        let board = TerminalFixtures.board().pressing(.tab).0
        let (typed, effects) = board.pressing([.character("a")] + Key.typing("plan it\n"))
        #expect(effects == [.add(title: "plan it", projectID: "p1", status: .doing)])
        #expect(typed.prompt == nil)
        let added = TaskItem(id: "t9", projectID: "p1", title: "plan it", status: .doing, position: 5)
        let selected = typed.after(.added(added), .tasks(TerminalFixtures.tasks + [added], generation: typed.generation))
        #expect(selected.selectedID == "t9", "the cursor goes to the new task")
        #expect(board.pressing([.character("a")] + Key.typing("nope") + [.escape]).1.isEmpty)
        let (empty, nothing) = board.pressing(.character("a"), .character(" "), .enter)
        #expect(nothing.isEmpty && empty.message?.contains("empty") == true)
        // The editor's keys are not the board's: q is typed, not quit.
        let quitTyped = board.pressing(.character("a"), .character("q"))
        #expect(!quitTyped.0.quitting && quitTyped.0.prompt?.editor.text == "q")
    }

    @Test("the detail screen changes status, priority, assignee and title, and Esc goes back to the task")
    func detailEdits() {
        let board = TerminalFixtures.board().pressing(.down).0
        let detail = board.pressing(.enter).0
        #expect(detail.screen == .detail(taskID: "t2") && detail.detail?.title == "fix bug")
        #expect(detail.pressing(.right).1 == [.mutate(.move(id: "t2", to: .doing, position: 4))])
        #expect(detail.pressing(.character("h")).1.isEmpty, "todo is the first status")
        #expect(detail.pressing(.character("1")).1 == [.mutate(.prioritize(id: "t2", priority: 1))])
        #expect(detail.pressing(.character("2")).1.isEmpty, "already 2")
        #expect(detail.pressing(.character("+")).1 == [.mutate(.prioritize(id: "t2", priority: 1))])
        #expect(detail.pressing(.character("-")).1 == [.mutate(.prioritize(id: "t2", priority: 3))])
        #expect(detail.pressing(.character("a")).1 == [.mutate(.assign(id: "t2", to: "ann"))])
        #expect(detail.pressing(.character("u")).1.isEmpty, "nobody's already")
        let (renamed, effects) = detail.pressing([.character("e"), .control("u")] + Key.typing("fix the bug\n"))
        #expect(effects == [.mutate(.rename(id: "t2", title: "fix the bug"))])
        #expect(renamed.screen == .detail(taskID: "t2"))
        #expect(detail.pressing([.character("e")] + Key.typing("\n")).1.isEmpty, "the same title changes nothing")
        // Assigned to ann, `a` gives it to nobody.
        let mine = board.pressing(.up, .enter).0
        #expect(mine.pressing(.character("a")).1 == [.mutate(.assign(id: "t1", to: nil))])
        // The change comes back through the live query, and the detail shows it.
        let moved = detail.pressing(.right)
        let shown = moved.0.delivering(moved.1)
        #expect(shown.detail?.status == .doing)
        let back = shown.pressing(.escape).0
        #expect(back.screen == .board && back.column == .doing && back.selectedID == "t2")
    }

    @Test("a task that leaves the query is fetched for the detail; one that is gone sends the user back")
    func detailOfATaskThatLeaves() {
        let detail = TerminalFixtures.board().pressing(.enter).0
        let (left, effects) = BoardCore.reduce(detail, .tasks(Array(TerminalFixtures.tasks.dropFirst()), generation: detail.generation))
        #expect(effects == [.fetch(taskID: "t1")])
        var held = TerminalFixtures.tasks[0]
        held.title = "still here"
        #expect(left.after(.fetched(id: "t1", held)).detail?.title == "still here")
        let gone = left.after(.fetched(id: "t1", nil))
        #expect(gone.screen == .board && gone.message?.contains("gone") == true)
    }

    @Test("news goes to the status line; a key clears the message; q and Ctrl-C quit")
    func statusAndQuit() {
        let board = TerminalFixtures.board().after(.sync(SyncInfo(connections: [.live, .connecting], pending: 2)))
        #expect(board.sync.summary == "connecting" && board.sync.pending == 2)
        let refused = board.after(.refused("the server refused moving a task to done: 404"))
        #expect(refused.message?.contains("refused") == true)
        #expect(refused.pressing(.down).0.message == nil)
        #expect(board.pressing(.character("q")) == (board.with { $0.quitting = true }, [.quit]))
        let editing = board.pressing(.enter, .character("e")).0
        #expect(editing.pressing(.control("c")).1 == [.quit], "Ctrl-C quits even while editing")
        #expect(board.pressing(.enter, .character("q")).0.screen == .board, "q on a task goes back")
        #expect(BoardCore.reduce(board, .stop).1 == [.quit])
    }
}

extension BoardState {
    /// A copy changed by `change`.
    func with(_ change: (inout BoardState) -> Void) -> BoardState {
        var copy = self
        change(&copy)
        return copy
    }
}
