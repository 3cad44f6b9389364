import TasksModel
import TasksTerminal
import Testing

/// The terminal client's frames, from states made by hand or by the core: what the user reads.
@Suite("Tasks terminal: the renderer")
struct BoardRendererTests {
    @Test("the board shows the projects, the filters, the columns with their tasks, the cursor, the status and the keys")
    func board() {
        let state = TerminalFixtures.board().after(.sync(SyncInfo(connections: [.live, .live], pending: 1)))
        let frame = BoardRenderer.render(state, width: 100, height: 14)
        #expect(frame.lines.count == 14)
        #expect(frame.lines[0].contains("ann") && frame.lines[0].contains("[Launch]") && frame.lines[0].contains("Ops"))
        #expect(frame.lines[1].contains("status all") && frame.lines[1].contains("assignee everyone"))
        #expect(frame.lines[3].contains("[TODO 2]") && frame.lines[3].contains("DOING 1") && frame.lines[3].contains("DONE 1"))
        #expect(frame.lines[4].contains(">P1 write docs @ann"), "\(frame.text)")
        #expect(frame.lines[4].contains(" P3 review @bob"))
        #expect(frame.lines[5].contains(" P2 fix bug"))
        #expect(frame.lines[12].contains("sync: live") && frame.lines[12].contains("1 pending"))
        #expect(frame.lines[13].contains("q quit"))
        #expect(frame.cursor == nil)
        // The cursor's column and task move with the keys.
        let moved = BoardRenderer.render(state.pressing(.tab).0, width: 100, height: 14)
        #expect(moved.lines[3].contains("[DOING 1]") && moved.lines[4].contains(">P3 review"))
    }

    @Test("the filters show in the header, and a status filter shows its column alone")
    func filtered() {
        var state = TerminalFixtures.board().pressing(.character("s"), .character("m")).0
        let mine = TerminalFixtures.tasks.filter { $0.status == .todo && $0.assignee == "ann" }
        state = state.after(.tasks(mine, generation: state.generation))
        let frame = BoardRenderer.render(state, width: 60, height: 10)
        #expect(frame.lines[1].contains("status todo") && frame.lines[1].contains("assignee mine"))
        #expect(frame.lines[3].contains("[TODO 1]") && !frame.text.contains("DOING"))
        #expect(frame.lines[4].contains(">P1 write docs"))
    }

    @Test("before projects or rows arrive, the board says so")
    func waiting() {
        let none = BoardRenderer.render(BoardState(user: "ann"), width: 80, height: 10)
        #expect(none.text.contains("no project"))
        let loading = BoardRenderer.render(BoardState(user: "ann").after(.projects(TerminalFixtures.projects)), width: 80, height: 10)
        #expect(loading.text.contains("loading"))
    }

    @Test("a task's detail shows all its fields and its keys")
    func detail() {
        let state = TerminalFixtures.board().pressing(.tab, .enter).0
        let frame = BoardRenderer.render(state, width: 80, height: 14)
        let text = frame.text
        for field in [
            "Title     review", "Status    doing", "Assignee  bob", "Priority  3 (low)", "Position  3", "Project   Launch (p1)", "Id        t3",
        ] {
            #expect(text.contains(field), "\(field) in\n\(text)")
        }
        #expect(frame.lines.last?.contains("esc back") == true)
    }

    @Test("the line being edited shows at the bottom with the cursor in it, scrolled to keep the cursor in view")
    func editorLine() {
        let typed = TerminalFixtures.board().pressing([.character("a")] + Key.typing("new thing")).0
        let frame = BoardRenderer.render(typed, width: 40, height: 10)
        #expect(frame.lines[9] == " new todo task: new thing")
        #expect(frame.cursor == Frame.Position(row: 9, column: 25))
        let long = TerminalFixtures.board().pressing([.character("a")] + Key.typing(String(repeating: "x", count: 60) + "END")).0
        let scrolled = BoardRenderer.render(long, width: 40, height: 10)
        #expect(scrolled.lines[9].hasSuffix("END"), "\(scrolled.lines[9])")
        #expect(scrolled.cursor == Frame.Position(row: 9, column: 39))
        let home = BoardRenderer.render(long.pressing(.home).0, width: 40, height: 10)
        #expect(home.cursor == Frame.Position(row: 9, column: 16))
    }

    @Test("users' text is drawn sanitized: no escape sequence or control reaches the terminal")
    func unsafeText() {
        let evil = TaskItem(
            id: "t\u{1B}[2J", projectID: "p1", title: "pwn\u{1B}[31m\u{1B}]0;title\u{7}\nline\u{202E}", assignee: "m\u{1B}[1mallory", position: 1)
        var state = BoardState(user: "ann\u{9B}")
        state = state.after(.projects([Project(id: "p1", name: "La\u{1B}[5munch\r")]))
        state = state.after(.tasks([evil], generation: state.generation))
        for shown in [state, state.pressing(.enter).0] {
            let frame = BoardRenderer.render(shown, width: 120, height: 16)
            for line in frame.lines {
                #expect(!line.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) || $0.value == 0x202E }, "\(line)")
            }
            #expect(frame.text.contains("pwn[31m]0;title line"))
        }
    }

    @Test("every size, down to nothing, gives exactly its height of lines, none wider than it")
    func anySize() {
        let states = [
            TerminalFixtures.board(),
            TerminalFixtures.board().pressing(.enter).0,
            TerminalFixtures.board().pressing([.character("a")] + Key.typing("日本語のタスク")).0,
            TerminalFixtures.board().after(.refused(String(repeating: "long message ", count: 20))),
        ]
        for state in states {
            for width in 0...45 {
                for height in 0...12 {
                    let frame = BoardRenderer.render(state, width: width, height: height)
                    #expect(frame.lines.count == height)
                    #expect(frame.lines.allSatisfy { TerminalText.width(of: $0) <= width }, "\(width)×\(height):\n\(frame.text)")
                    if let cursor = frame.cursor { #expect(cursor.row < height && cursor.column < width) }
                }
            }
        }
        #expect(BoardRenderer.render(states[0], width: 20, height: 5).lines[0].contains("too small"))
    }

    @Test("a column with more tasks than rows scrolls to the cursor and counts the rest")
    func scrolling() {
        let many = (1...30).map { TaskItem(id: "t\($0)", projectID: "p1", title: "task \($0)", position: Double($0)) }
        let state = TerminalFixtures.board(tasks: many)
        let top = BoardRenderer.render(state, width: 60, height: 12)
        #expect(top.lines[4].contains(">P2 task 1") && top.lines[8].contains("+26 more"), "\(top.text)")
        let down = state.pressing(Array(repeating: .down, count: 20)).0
        let scrolled = BoardRenderer.render(down, width: 60, height: 12)
        #expect(scrolled.lines[7].contains(">P2 task 21"), "\(scrolled.text)")
        let longTitle = TerminalFixtures.board(tasks: [TaskItem(id: "x", projectID: "p1", title: String(repeating: "long ", count: 60), position: 1)])
        let detail = BoardRenderer.render(longTitle.pressing(.enter).0, width: 40, height: 16)
        #expect(detail.lines.filter { $0.contains("long") }.count > 1, "a long title wraps on the detail screen")
    }
}
