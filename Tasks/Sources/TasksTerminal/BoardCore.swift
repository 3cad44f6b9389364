import TasksModel

/// The terminal client's logic, pure: a state and an event in, the next state and what to ask
/// of the client out. No terminal, no clock, no client: the session runs the effects and feeds
/// back what comes of them as events.
///
/// The keys, on the board: ↑/↓ (k/j) pick a task in the column, Tab/Shift-Tab pick the column,
/// ←/→ (h/l) move the task to the previous or next status, Enter opens it, `a` adds a task to
/// the column, `[`/`]` switch project, `s` cycles the status filter, `m` toggles "mine", `q`
/// quits. On a task: ←/→ (h/l) change its status, `1`–`3` and `+`/`-` its priority, `a`
/// assigns it to the user or to no one, `u` to no one, `e` (or `r`) edits its title, Esc (or
/// `q`) goes back. Ctrl-C quits from anywhere.
public enum BoardCore {
    /// The state after `event`, and the effects it asks for, in order.
    public static func reduce(_ state: BoardState, _ event: BoardEvent) -> (BoardState, [BoardEffect]) {
        var next = state
        let effects = next.apply(event)
        return (next, effects)
    }
}

extension BoardState {
    /// Applies `event` in place; the effects it asks for.
    mutating func apply(_ event: BoardEvent) -> [BoardEffect] {
        switch event {
        case .key(.control("c")), .stop:
            quitting = true
            return [.quit]
        case .key(let key):
            // A key acknowledges whatever the status line said.
            message = nil
            if prompt != nil { return edit(key) }
            switch screen {
            case .board: return boardKey(key)
            case .detail(let id): return detailKey(key, id)
            }
        case .projects(let list):
            return received(list)
        case .tasks(let rows, let generation):
            guard generation == self.generation else { return [] }
            return received(rows)
        case .added(let task):
            // The cursor goes to the new task, once the board shows it.
            if screen == .board && columns.contains(task.status) {
                column = task.status
                selectedID = task.id
            }
            return []
        case .fetched(let id, let row):
            guard case .detail(id) = screen else { return [] }
            if let row {
                detail = row
            } else {
                leaveDetail()
                message = "that task is gone (deleted, or moved to a project you are not in)"
            }
            return []
        case .sync(let info):
            sync = info
            return []
        case .refused(let text), .failed(let text):
            message = text
            return []
        }
    }

    // MARK: News from the client

    private mutating func received(_ list: [Project]) -> [BoardEffect] {
        projects = list
        // The shown project stays shown while the user belongs to it.
        if let projectID, list.contains(where: { $0.id == projectID }) { return [] }
        // Still none: nothing to watch anew.
        if projectID == nil && list.isEmpty { return [] }
        if projectID != nil { message = "you are no longer in that project" }
        projectID = list.first?.id
        screen = .board
        prompt = nil
        return rewatch()
    }

    private mutating func received(_ rows: [TaskItem]) -> [BoardEffect] {
        // Where the cursor was in its column, to stay there if its task left.
        let before = tasks(in: column).firstIndex { $0.id == selectedID }
        // The first rows of a query made anew (another filter): the cursor stays on its task,
        // in whichever column shows it now.
        if !loaded, let task = rows.first(where: { $0.id == selectedID }), columns.contains(task.status) {
            column = task.status
        }
        tasks = rows
        loaded = true
        let shown = tasks(in: column)
        // A cursor whose task left its column takes the task in its row; in an empty column it
        // keeps its task's id, to find it again when a filter that hid it is undone.
        if !shown.isEmpty && !shown.contains(where: { $0.id == selectedID }) {
            selectedID = shown[min(before ?? 0, shown.count - 1)].id
        }
        guard case .detail(let id) = screen else { return [] }
        if let row = rows.first(where: { $0.id == id }) {
            detail = row
            return []
        }
        // Left the query (a filter, or another project): the device may still hold it.
        return [.fetch(taskID: id)]
    }

    /// Watches the query the project and the filters ask for, from scratch.
    private mutating func rewatch() -> [BoardEffect] {
        generation += 1
        watching = query
        // The rows go (they are not the new query's), the cursor's task stays, to be found
        // again in the new rows.
        tasks = []
        loaded = false
        if !columns.contains(column) { column = columns[0] }
        return [.watch(watching, generation: generation)]
    }

    // MARK: The board

    private mutating func boardKey(_ key: Key) -> [BoardEffect] {
        switch key {
        case .character("q"):
            quitting = true
            return [.quit]
        case .up, .character("k"):
            moveCursor(by: -1)
        case .down, .character("j"):
            moveCursor(by: 1)
        case .tab:
            focus(columnOffset: 1)
        case .backTab:
            focus(columnOffset: -1)
        case .left, .character("h"):
            return selectedTask.map { shift($0, by: -1) } ?? []
        case .right, .character("l"):
            return selectedTask.map { shift($0, by: 1) } ?? []
        case .enter:
            if let task = selectedTask {
                screen = .detail(taskID: task.id)
                detail = task
            }
        case .character("a"):
            guard projectID != nil else {
                message = "no project to add a task to"
                return []
            }
            prompt = Prompt(purpose: .newTask(column), editor: LineEditor())
        case .character("]"):
            return switchProject(by: 1)
        case .character("["):
            return switchProject(by: -1)
        case .character("s"):
            // All, then each status in turn, then all again.
            let order: [TaskItem.Status?] = [nil] + TaskItem.Status.allCases
            let index = order.firstIndex(of: statusFilter) ?? 0
            statusFilter = order[(index + 1) % order.count]
            if let statusFilter { column = statusFilter }
            return rewatch()
        case .character("m"):
            mineOnly.toggle()
            return rewatch()
        default:
            break
        }
        return []
    }

    private mutating func moveCursor(by offset: Int) {
        let shown = tasks(in: column)
        guard !shown.isEmpty else { return }
        let index = shown.firstIndex { $0.id == selectedID }.map { $0 + offset } ?? 0
        selectedID = shown[min(max(0, index), shown.count - 1)].id
    }

    private mutating func focus(columnOffset: Int) {
        let shown = columns
        guard let index = shown.firstIndex(of: column) else { return }
        let row = tasks(in: column).firstIndex { $0.id == selectedID } ?? 0
        column = shown[(index + columnOffset + shown.count) % shown.count]
        let tasks = tasks(in: column)
        if !tasks.isEmpty { selectedID = tasks[min(row, tasks.count - 1)].id }
    }

    private mutating func switchProject(by offset: Int) -> [BoardEffect] {
        guard !projects.isEmpty else { return [] }
        let index = projects.firstIndex { $0.id == projectID } ?? 0
        let target = projects[(index + offset + projects.count) % projects.count].id
        guard target != projectID else { return [] }
        projectID = target
        return rewatch()
    }

    /// Moves `task` to the status `offset` columns away, at the end of that column as shown;
    /// the cursor goes with it when that column is shown.
    private mutating func shift(_ task: TaskItem, by offset: Int) -> [BoardEffect] {
        let statuses = TaskItem.Status.allCases
        guard let index = statuses.firstIndex(of: task.status), statuses.indices.contains(index + offset) else { return [] }
        let target = statuses[index + offset]
        if columns.contains(target) {
            column = target
        } else {
            message = "moved “\(TerminalText.sanitized(task.title))” to \(target.rawValue)"
        }
        return [.mutate(.move(id: task.id, to: target, position: position(of: task, in: target)))]
    }

    /// Where `task` goes in the column of `status`: after its last shown task, or where it is
    /// when that column shows none.
    private func position(of task: TaskItem, in status: TaskItem.Status) -> Double {
        let others = tasks(in: status).filter { $0.id != task.id }
        return others.map(\.position).max().map { $0 + 1 } ?? task.position
    }

    // MARK: A task

    private mutating func detailKey(_ key: Key, _ id: String) -> [BoardEffect] {
        guard let task = detail else {
            leaveDetail()
            return []
        }
        switch key {
        case .escape, .character("q"), .backspace:
            leaveDetail()
        case .left, .character("h"), .right, .character("l"):
            let forward = key == .right || key == .character("l")
            let statuses = TaskItem.Status.allCases
            guard let index = statuses.firstIndex(of: task.status), statuses.indices.contains(index + (forward ? 1 : -1)) else { return [] }
            let target = statuses[index + (forward ? 1 : -1)]
            return [.mutate(.move(id: id, to: target, position: position(of: task, in: target)))]
        case .character("1"), .character("2"), .character("3"):
            guard case .character(let digit) = key, let priority = Int(String(digit)), priority != task.priority else { return [] }
            return [.mutate(.prioritize(id: id, priority: priority))]
        case .character("+"):
            return task.priority > 1 ? [.mutate(.prioritize(id: id, priority: task.priority - 1))] : []
        case .character("-"):
            return task.priority < 3 ? [.mutate(.prioritize(id: id, priority: task.priority + 1))] : []
        case .character("a"):
            return [.mutate(.assign(id: id, to: task.assignee == user ? nil : user))]
        case .character("u"):
            return task.assignee == nil ? [] : [.mutate(.assign(id: id, to: nil))]
        case .character("e"), .character("r"), .enter:
            prompt = Prompt(purpose: .rename(taskID: id), editor: LineEditor(task.title))
        default:
            break
        }
        return []
    }

    /// Back to the board, the cursor on the task left (in its column, if shown).
    private mutating func leaveDetail() {
        if let detail, columns.contains(detail.status), tasks.contains(where: { $0.id == detail.id }) {
            column = detail.status
            selectedID = detail.id
        }
        screen = .board
        detail = nil
    }

    // MARK: The line editor

    private mutating func edit(_ key: Key) -> [BoardEffect] {
        guard var current = prompt else { return [] }
        switch current.editor.handle(key) {
        case .editing:
            prompt = current
            return []
        case .cancelled:
            prompt = nil
            return []
        case .committed(let title):
            prompt = nil
            guard !title.isEmpty else {
                message = "a title cannot be empty: nothing changed"
                return []
            }
            switch current.purpose {
            case .newTask(let status):
                guard let projectID else { return [] }
                return [.add(title: title, projectID: projectID, status: status)]
            case .rename(let id):
                guard detail?.id != id || detail?.title != title else { return [] }
                return [.mutate(.rename(id: id, title: title))]
            }
        }
    }
}
