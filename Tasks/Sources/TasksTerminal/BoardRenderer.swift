import TasksModel

/// Draws a ``BoardState`` as a ``Frame`` of a given size, purely: the same state and size give
/// the same lines, and every line fits the width (data sanitized, long text cut with "…"), so
/// a test reads the screen as the user would.
///
/// Layout, top to bottom: the user and the projects (the shown one in brackets), the filters, a
/// rule, the columns (or a task's fields), a rule, the status line (sync, pending changes, a
/// message), and the keys' help or the line being edited.
public enum BoardRenderer {
    /// Below this the layout does not fit: the frame says so instead.
    public static let minimumWidth = 30
    /// Below this the layout does not fit: the frame says so instead.
    public static let minimumHeight = 8

    /// The frame of `state` on a screen of `width` columns and `height` rows.
    public static func render(_ state: BoardState, width: Int, height: Int) -> Frame {
        guard width > 0, height > 0 else { return Frame(lines: Array(repeating: "", count: max(0, height))) }
        guard width >= minimumWidth, height >= minimumHeight else {
            let lines = ["too small for Tasks", "(\(minimumWidth)×\(minimumHeight) at least; q quits)"]
            return Frame(lines: (0..<height).map { $0 < lines.count ? TerminalText.fit(lines[$0], width: width) : "" })
        }
        let rule = String(repeating: "─", count: width)
        let bodyHeight = height - 6
        let body: [String] =
            switch state.screen {
            case .board: board(state, width: width, height: bodyHeight)
            case .detail: detail(state, width: width, height: bodyHeight)
            }
        var lines = header(state, width: width) + [rule] + body + [rule, statusLine(state, width: width)]
        var cursor: Frame.Position?
        if let prompt = state.prompt {
            let (line, column) = editorLine(prompt, width: width)
            cursor = Frame.Position(row: lines.count, column: column)
            lines.append(line)
        } else {
            lines.append(TerminalText.fit(help(state), width: width))
        }
        return Frame(lines: lines, cursor: cursor)
    }

    // MARK: Parts

    private static func header(_ state: BoardState, width: Int) -> [String] {
        let projects =
            state.projects.isEmpty
            ? "no projects"
            : state.projects.map { project in
                let name = TerminalText.sanitized(project.name)
                return project.id == state.projectID ? "[\(name)]" : name
            }.joined(separator: "  ")
        let status = state.statusFilter?.rawValue ?? "all"
        let assignee = state.mineOnly ? "mine" : "everyone"
        return [
            TerminalText.fit(" Tasks · \(TerminalText.sanitized(state.user)) │ \(projects)", width: width),
            TerminalText.fit(" filter: status \(status) · assignee \(assignee)", width: width),
        ]
    }

    private static func board(_ state: BoardState, width: Int, height: Int) -> [String] {
        guard state.projectID != nil else {
            return fill(["", " You belong to no project yet: a server admin adds you to one."], width: width, height: height)
        }
        guard state.loaded else { return fill(["", " loading…"], width: width, height: height) }
        let columns = state.columns
        // Columns share the width; the separators take one cell each.
        let columnWidth = (width - (columns.count - 1)) / columns.count
        let cells = columns.map { status in
            column(status, state: state, width: columnWidth, height: height)
        }
        return (0..<height).map { row in
            TerminalText.fit(cells.map { $0[row] }.joined(separator: "│"), width: width)
        }
    }

    /// One column: its heading, then as many tasks as fit, scrolled to keep the cursor's in
    /// view, the last line saying how many are not shown.
    private static func column(_ status: TaskItem.Status, state: BoardState, width: Int, height: Int) -> [String] {
        let tasks = state.tasks(in: status)
        let focused = status == state.column
        let title = "\(status.rawValue.uppercased()) \(tasks.count)"
        var lines = [TerminalText.padded(focused ? "[\(title)]" : " \(title)", width: width)]
        let room = height - 1
        var shown = tasks[...]
        var more: String?
        if tasks.count > room {
            // One line keeps the count of the others.
            let capacity = max(0, room - 1)
            let selected = focused ? tasks.firstIndex { $0.id == state.selectedID } ?? 0 : 0
            let first = max(0, min(selected - capacity + 1, tasks.count - capacity))
            shown = tasks[first..<first + capacity]
            more = "  +\(tasks.count - capacity) more"
        }
        for task in shown {
            lines.append(cell(task, selected: focused && task.id == state.selectedID, width: width))
        }
        if let more { lines.append(TerminalText.padded(more, width: width)) }
        while lines.count < height { lines.append(String(repeating: " ", count: width)) }
        return lines
    }

    /// A task on the board: the cursor's mark, its priority, its title, its assignee; the title
    /// is what gets cut.
    private static func cell(_ task: TaskItem, selected: Bool, width: Int) -> String {
        let prefix = "\(selected ? ">" : " ")P\(task.priority) "
        var suffix = task.assignee.map { " @" + TerminalText.sanitized($0) } ?? ""
        var room = width - TerminalText.width(of: prefix) - TerminalText.width(of: suffix)
        if room < 6 {
            // Too narrow for both: the title wins.
            suffix = ""
            room = width - TerminalText.width(of: prefix)
        }
        let title = TerminalText.fit(TerminalText.sanitized(task.title), width: max(0, room))
        return TerminalText.padded(prefix + title + suffix, width: width)
    }

    private static func detail(_ state: BoardState, width: Int, height: Int) -> [String] {
        guard let task = state.detail else { return fill([], width: width, height: height) }
        let label = 11
        let room = max(1, width - label - 1)
        // The title wraps (up to what the body leaves after the other fields).
        let titleLines = wrap(TerminalText.sanitized(task.title), width: room, lines: max(1, height - 7))
        let project = state.projects.first { $0.id == task.projectID }.map { TerminalText.sanitized($0.name) }
        let priorityName = [1: "high", 2: "normal", 3: "low"][task.priority].map { " (\($0))" } ?? ""
        let fields: [(String, String)] =
            titleLines.enumerated().map { ($0.offset == 0 ? "Title" : "", $0.element) } + [
                ("Status", task.status.rawValue),
                ("Assignee", task.assignee.map { TerminalText.sanitized($0) } ?? "nobody"),
                ("Priority", "\(task.priority)\(priorityName)"),
                ("Position", position(task.position)),
                ("Project", project.map { "\($0) (\(TerminalText.sanitized(task.projectID)))" } ?? TerminalText.sanitized(task.projectID)),
                ("Id", TerminalText.sanitized(task.id)),
            ]
        let lines = [""] + fields.map { name, value in TerminalText.fit(" " + TerminalText.padded(name, width: label - 1) + value, width: width) }
        return fill(lines, width: width, height: height)
    }

    private static func statusLine(_ state: BoardState, width: Int) -> String {
        var parts = [" sync: \(state.sync.summary)", "\(state.sync.pending) pending"]
        if let message = state.message { parts.append(TerminalText.sanitized(message)) }
        return TerminalText.fit(parts.joined(separator: " · "), width: width)
    }

    private static func help(_ state: BoardState) -> String {
        switch state.screen {
        case .board:
            " ↑↓ pick  tab column  ←→ move  enter open  a add  [ ] project  s status  m mine  q quit"
        case .detail:
            " ←→ status  1-3 +- priority  a me/nobody  e edit title  esc back"
        }
    }

    /// The prompt's line, scrolled so that the cursor is in view, and the cursor's column.
    private static func editorLine(_ prompt: BoardState.Prompt, width: Int) -> (String, Int) {
        let label =
            switch prompt.purpose {
            case .newTask(let status): " new \(status.rawValue) task: "
            case .rename: " title: "
            }
        let labelWidth = TerminalText.width(of: label)
        // One cell is kept for the cursor after the last character.
        let room = max(1, width - labelWidth - 1)
        let characters = prompt.editor.characters
        var start = prompt.editor.cursor
        var before = 0
        while start > 0 && before + TerminalText.width(of: characters[start - 1]) <= room {
            start -= 1
            before += TerminalText.width(of: characters[start])
        }
        var end = prompt.editor.cursor
        var used = before
        while end < characters.count && used + TerminalText.width(of: characters[end]) <= room {
            used += TerminalText.width(of: characters[end])
            end += 1
        }
        let line = TerminalText.fit(label + String(characters[start..<end]), width: width)
        return (line, min(width - 1, labelWidth + before))
    }

    // MARK: Helpers

    /// `lines` fitted to `width`, then blank lines up to `height` (or cut to it).
    private static func fill(_ lines: [String], width: Int, height: Int) -> [String] {
        (0..<height).map { $0 < lines.count ? TerminalText.fit(lines[$0], width: width) : "" }
    }

    /// `text` in lines of at most `width` columns, at most `lines` of them, the last cut with
    /// "…" when it does not all fit.
    private static func wrap(_ text: String, width: Int, lines limit: Int) -> [String] {
        var lines: [String] = []
        var current = ""
        var used = 0
        for character in text {
            let next = TerminalText.width(of: character)
            if used + next > width {
                lines.append(current)
                current = ""
                used = 0
            }
            current.append(character)
            used += next
        }
        lines.append(current)
        guard lines.count > limit else { return lines }
        // The last line shown ends in "…", in place of what does not fit.
        var last = lines[limit - 1]
        while !last.isEmpty && TerminalText.width(of: last) > width - 1 { last.removeLast() }
        return Array(lines.prefix(limit - 1)) + [last + "…"]
    }

    /// A position without a useless ".0".
    private static func position(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value)
    }
}
