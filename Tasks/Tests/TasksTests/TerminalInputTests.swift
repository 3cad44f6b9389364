import TasksTerminal
import Testing

/// The terminal's bytes as keys, and the line editor, without a terminal.
@Suite("Tasks terminal: keys and the line editor")
struct TerminalInputTests {
    @Test("bytes decode to keys: text in any script, controls, arrows in both forms, VT keys")
    func decoding() {
        #expect(KeyDecoder.decode(Array("aé日".utf8)) == [.character("a"), .character("é"), .character("日")])
        #expect(KeyDecoder.decode([0x0D, 0x0D, 0x0A, 0x09, 0x7F, 0x03]) == [.enter, .enter, .tab, .backspace, .control("c")])
        #expect(KeyDecoder.decode(Array("\u{1B}[A\u{1B}[B\u{1B}[C\u{1B}[D\u{1B}OA".utf8)) == [.up, .down, .right, .left, .up])
        #expect(
            KeyDecoder.decode(Array("\u{1B}[H\u{1B}[F\u{1B}[3~\u{1B}[1~\u{1B}[4~\u{1B}[Z".utf8)) == [.home, .end, .delete, .home, .end, .backTab])
        #expect(KeyDecoder.decode([0x1B]) == [.escape], "a read ending in ESC is the Escape key")
        #expect(KeyDecoder.decode(Array("\u{1B}x".utf8)) == [.escape, .character("x")])
        // Sequences it does not know, or cut off, are dropped whole: never typed as text.
        #expect(KeyDecoder.decode(Array("\u{1B}[200~a\u{1B}[1;5".utf8)) == [.character("a")])
        #expect(KeyDecoder.decode([0xFF, 0xC3]) == [], "invalid UTF-8 is skipped")
    }

    @Test("the line editor inserts at the cursor, moves, deletes, and commits trimmed")
    func editing() {
        var editor = LineEditor("ship")
        for key in [Key.home] + Key.typing("we ") + [.end] + Key.typing(" it") { _ = editor.handle(key) }
        #expect(editor.text == "we ship it" && editor.cursor == 10)
        for key: Key in [.left, .left, .left, .backspace] { _ = editor.handle(key) }
        #expect(editor.text == "we shi it" && editor.cursor == 6)
        _ = editor.handle(.delete)
        #expect(editor.text == "we shiit" && editor.cursor == 6)
        _ = editor.handle(.control("w"))
        #expect(editor.text == "we it" && editor.cursor == 3)
        _ = editor.handle(.control("k"))
        #expect(editor.text == "we " && editor.cursor == 3)
        _ = editor.handle(.control("a"))
        _ = editor.handle(.control("e"))
        #expect(editor.cursor == 3)
        _ = editor.handle(.control("u"))
        #expect(editor.text.isEmpty && editor.cursor == 0)
        for key in Key.typing("  padded  ") { _ = editor.handle(key) }
        #expect(editor.handle(.enter) == .committed("padded"))
        #expect(editor.handle(.escape) == .cancelled)
        #expect(editor.handle(.up) == .editing)
    }

    @Test("the line editor keeps escapes and newlines out, and stops at its limit")
    func unsafeInput() {
        var editor = LineEditor("a\u{1B}[2Jb\nc", limit: 8)
        #expect(editor.text == "a[2Jb c")
        for key in Key.typing("xyz") { _ = editor.handle(key) }
        #expect(editor.text == "a[2Jb cx", "8 characters at most")
        var other = LineEditor()
        _ = other.handle(.character("\u{7}"))
        _ = other.handle(.character("\u{202E}"))
        #expect(other.text.isEmpty)
    }

    @Test("text is sanitized and fitted to cells")
    func terminalText() {
        #expect(TerminalText.sanitized("ok\u{1B}]0;owned\u{7}\u{9B}31m\r\nnext\u{202E}") == "ok]0;owned31m  next")
        #expect(TerminalText.width(of: "日本") == 4)
        #expect(TerminalText.width(of: "e\u{301}") == 1)
        #expect(TerminalText.fit("hello world", width: 5) == "hell…")
        #expect(TerminalText.fit("日本語", width: 4) == "日…")
        #expect(TerminalText.fit("abc", width: 0).isEmpty)
        #expect(TerminalText.padded("ab", width: 4) == "ab  ")
    }
}
