import Foundation
import NightrideModel
import StateLoopServer
import StateLoopWire
import TestSupport
import Testing

@testable import NightrideServer

/// The rules of a new account's name over loopback: what a sign-up refuses, and why.
@Suite("Nightride new names", .timeLimit(.minutes(4)))
struct NewNameTests {
    @Test("a new name with invisible characters or letters of two scripts is refused (400, saying why); an account made before the rules signs in")
    func newNames() async throws {
        try await withNightride { harness, loopback in
            let owner = AddressedClient(port: loopback.port, source: "127.0.0.1")
            let refused: [(String, String)] = [
                ("p\u{430}ypal", "mixes Cyrillic (U+0430) and Latin (U+0070)"),
                ("\u{3164}", "invisible"), ("ann\u{3164}", "invisible"), ("\u{115F}ann", "invisible"), ("ann\u{FFA0}", "invisible"),
                ("an\u{200B}n", "invisible"), ("an\u{200D}n", "invisible"), ("ann\u{FE0F}", "invisible"), ("ann\u{E0101}", "invisible"),
                ("ann\u{00AD}", "invisible"), ("ann\u{2800}", "invisible"), ("an\u{00A0}n", "invisible"),
                ("\u{FF41}nn", "U+FF41 is none of them"), ("ann\u{1F600}", "U+1F600 is none of them"),
                ("\u{3B1}nn", "mixes Greek (U+03B1) and Latin (U+006E)"), ("ann\u{663}", "mixes Arabic (U+0663) and Latin (U+0061)"),
            ]
            for (name, reason) in refused {
                let (status, _, body) = try await owner.login(name, "pw")
                let error = try? JSONDecoder().decode(ErrorBody.self, from: body)
                #expect(status == 400 && error?.error == "invalidName", "\(name.unicodeScalars.map { String($0.value, radix: 16) }): \(status)")
                #expect(error?.message.contains(reason) == true, "\(error?.message ?? "")")
            }
            for name in [
                "paypal", "\u{43F}\u{430}\u{439}\u{43F}\u{430}\u{43B}", "zo\u{E9}", "zoe\u{301}-2", "\u{6771}\u{4EAC}\u{3059}\u{30AB}",
                "\u{D55C}\u{AE00}", "ann_b.c 7",
            ] {
                #expect(try await owner.login(name, "pw").status == 200, "\(name)")
            }
            #expect(try await harness.server.passwordHash(of: "p\u{430}ypal") == nil, "no account was made")

            // An account from before the rules, whose name mixes scripts, keeps signing in.
            let legacy = "p\u{430}ypal"
            let account = try #require(await harness.server.account("paypal"))
            try await harness.server.openData().sync.update { transaction in
                try transaction.write(
                    Account(name: legacy, passwordHash: account.passwordHash), to: NightrideResources.account, AccountName.key(of: legacy))
            }
            #expect(try await owner.login(legacy, "pw").status == 200)
        }
    }
}
