import StateLoopServer
import Testing

/// The kit's rules for sign-in names: what every sign-in accepts, what only a new account is
/// held to, and how names become one account's key.
@Suite("Account names")
struct AccountNameTests {
    @Test("a sign-in name is trimmed and composed; empty, overlong or control-bearing names are refused with the limits")
    func signInNames() throws {
        #expect(try AccountName.checked("  zoe\u{301} ") == "zo\u{E9}")
        #expect(try AccountName.checked(String(repeating: "a", count: 40)).count == 40)
        for name in ["", "   ", String(repeating: "a", count: 41), "an\u{7}n", "ann\u{202E}"] {
            #expect(throws: AccountName.Refusal.self, "\(name.unicodeScalars.map(\.value))") { try AccountName.checked(name) }
        }
        #expect(throws: AccountName.Refusal.self) { try AccountName.checked("éééé", maximumLength: 10, maximumBytes: 6) }
        do {
            _ = try AccountName.checked("", maximumLength: 12, maximumBytes: 48)
            Issue.record("an empty name passed")
        } catch {
            #expect(error.description.contains("1 to 12 characters (at most 48 bytes)"))
        }
    }

    @Test("a new name may not hold invisible characters or letters of two scripts; each refusal names the character")
    func newNames() throws {
        let refused: [(String, String)] = [
            ("p\u{430}ypal", "mixes Cyrillic (U+0430) and Latin (U+0070)"),
            ("\u{3164}", "U+3164"), ("ann\u{3164}", "invisible"), ("\u{115F}ann", "invisible"), ("ann\u{FFA0}", "invisible"),
            ("an\u{200B}n", "U+200B"), ("an\u{200D}n", "invisible"), ("ann\u{FE0F}", "invisible"), ("ann\u{E0101}", "invisible"),
            ("ann\u{00AD}", "invisible"), ("ann\u{2800}", "invisible"), ("an\u{00A0}n", "invisible"),
            ("\u{FF41}nn", "U+FF41 is none of them"), ("ann\u{1F600}", "U+1F600 is none of them"),
            ("\u{3B1}nn", "mixes Greek (U+03B1) and Latin (U+006E)"), ("ann\u{663}", "mixes Arabic (U+0663) and Latin (U+0061)"),
        ]
        for (name, reason) in refused {
            do {
                _ = try AccountName.checkedForSignUp(name)
                Issue.record("\(name.unicodeScalars.map { String($0.value, radix: 16) }) passed")
            } catch {
                #expect(error.description.contains(reason), "\(error.description)")
            }
        }
        // One script, scripts written together, digits, spaces, '-', '_', '.' and accents.
        for name in [
            "paypal", "\u{43F}\u{430}\u{439}\u{43F}\u{430}\u{43B}", "zo\u{E9}", "zoe\u{301}-2", "\u{6771}\u{4EAC}\u{3059}\u{30AB}",
            "\u{D55C}\u{AE00}", "\u{D55C}\u{6F22}", "ann_b.c 7",
        ] {
            #expect(try AccountName.checkedForSignUp(name) == name)
        }
        #expect(NameScript.mayMix([.han, .katakana]) && !NameScript.mayMix([.hangul, .katakana]))
    }

    @Test("one account whatever the case or the spelling of an accent")
    func keys() {
        #expect(AccountName.key(ofLogin: " Ann ") == AccountName.key(ofLogin: "ANN"))
        #expect(AccountName.key(ofLogin: "Zoe\u{301}") == AccountName.key(of: "zo\u{E9}"))
        #expect(AccountName.key(ofLogin: "ann") != AccountName.key(ofLogin: "anne"))
    }
}
