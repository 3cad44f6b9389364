import Foundation
import NightrideModel
import StateLoopServer
import StateLoopTesting
import StateLoopWire
import TestSupport
import Testing

@testable import NightrideServer

/// Sign-in limits over loopback, with clients the server tells apart by their loopback address
/// (127.0.0.x), on a test clock: no wait here is on the real clock.
@Suite(
    "Nightride sign-in limits",
    .timeLimit(.minutes(6)),
    .enabled(if: AddressedClient.canSend(from: "127.0.0.2"), "needs several loopback addresses (Linux has all of 127.0.0.0/8)")
)
struct LoginLimitsTests {
    /// Small limits, so a test reaches them in a few requests.
    static let limits = SignInLimits.Policy(
        failuresPerPair: 5, failuresPerPairLonger: 12, failuresPerName: 8, failuresPerAddress: 10,
        successesPerName: 30, signUpsPerAddress: 5, window: .seconds(60), backoffWindow: .seconds(3_600), signUpWindow: .seconds(3_600)
    )

    func clients(_ port: Int) -> (owner: AddressedClient, guesser: AddressedClient, others: [AddressedClient]) {
        (
            AddressedClient(port: port, source: "127.0.0.1"), AddressedClient(port: port, source: "127.0.0.2"),
            (3...9).map { AddressedClient(port: port, source: "127.0.0.\($0)") }
        )
    }

    @Test(
        "a stranger's guesses hold back their own address, never the owner's: per name and address with backoff; a name under attack and a guessing address only narrow what failing addresses may do"
    )
    func noLockout() async throws {
        let clock = TestClock()
        try await withNightride(.init(epoch: 1, loginLimits: Self.limits, passwordCost: 4), clock: clock) { harness, loopback in
            let (owner, guesser, others) = clients(loopback.port)
            #expect(try await owner.login("gus", "right").status == 200)
            // Five wrong passwords, in any spelling of the name, from the guesser's address.
            for spelling in ["gus", "GUS", "Gus", " gus", "gUS"] {
                #expect(try await guesser.login(spelling, "wrong").status == 401)
            }
            // The guesser waits, even with the right password: no password is checked.
            let held = try await guesser.login("gus", "right")
            #expect(held.status == 429 && (held.retryAfter ?? 0) > 0)
            #expect(try JSONDecoder().decode(ErrorBody.self, from: held.body).error == "tooManyAttempts")
            // The owner, from an address that has not been guessing, signs in.
            #expect(try await owner.login("gus", "right").status == 200)

            // Backoff: a guesser who keeps going after each minute's wait waits an hour.
            await clock.advance(by: .seconds(61))
            for _ in 1...5 { #expect(try await guesser.login("gus", "wrong").status == 401) }
            await clock.advance(by: .seconds(61))
            for _ in 1...2 { #expect(try await guesser.login("gus", "wrong").status == 401) }
            await clock.advance(by: .seconds(61))
            let longer = try await guesser.login("gus", "wrong")
            #expect(longer.status == 429 && (longer.retryAfter ?? 0) > 60, "12 failures in the hour: the wait is the hour's")
            #expect(try await owner.login("gus", "right").status == 200)

            // A name under attack from many addresses (8 failures a minute): an address that
            // failed at it once waits; one that has not, the owner's, goes ahead.
            await clock.advance(by: .seconds(3_601))
            #expect(try await owner.login("ida", "right").status == 200)
            for client in others { #expect(try await client.login("ida", "wrong").status == 401) }
            #expect(try await others[0].login("ida", "wrong").status == 401, "the eighth failure")
            #expect(try await others[0].login("ida", "right").status == 429, "under attack: one failure per address a window")
            #expect(try await others[1].login("ida", "right").status == 429)
            #expect(try await owner.login("ida", "right").status == 200)

            // An address guessing at many names (10 failures a minute) tries no new name, but
            // the users who signed in from it (behind one NAT) still do.
            await clock.advance(by: .seconds(3_601))
            #expect(try await guesser.login("hal", "pw").status == 200)
            #expect(try await owner.login("joe", "pw").status == 200)
            for index in 0..<10 { #expect(try await guesser.login("name\(index)", nil).status == 400) }
            #expect(try await guesser.login("hal", "pw").status == 200, "hal signs in from this address: not held back")
            #expect(try await guesser.login("joe", "pw").status == 429, "a name new to this address waits")
            #expect(try await guesser.login("kim", "pw").status == 429, "and so does a sign-up")
            #expect(try await owner.login("joe", "pw").status == 200, "joe's own address is not the guesser's")
        }
    }

    @Test("sign-ups are limited per address (429 with Retry-After); sign-ins of existing accounts from it are not")
    func signUpsLimited() async throws {
        let clock = TestClock()
        try await withNightride(.init(epoch: 1, loginLimits: Self.limits, passwordCost: 4), clock: clock) { _, loopback in
            let (owner, guesser, _) = clients(loopback.port)
            for index in 0..<5 { #expect(try await guesser.login("new\(index)", "pw").status == 200) }
            let sixth = try await guesser.login("new5", "pw")
            #expect(sixth.status == 429 && (sixth.retryAfter ?? 0) > 60)
            #expect((try? JSONDecoder().decode(ErrorBody.self, from: sixth.body))?.error == "tooManyAttempts")
            #expect(try await guesser.login("new0", "pw").status == 200, "signing in is not signing up")
            #expect(try await owner.login("new5", "pw").status == 200, "another address signs up")
            await clock.advance(by: .seconds(3_601))
            #expect(try await guesser.login("new6", "pw").status == 200, "an hour later")
        }
    }

    @Test("successful sign-ins are limited per name (each makes a stored session), even the owner's")
    func signInsLimited() async throws {
        let clock = TestClock()
        try await withNightride(.init(epoch: 1, loginLimits: Self.limits, passwordCost: 4), clock: clock) { _, loopback in
            let owner = clients(loopback.port).owner
            #expect(try await owner.login("new0", "pw").status == 200)
            await clock.advance(by: .seconds(61))
            for _ in 0..<30 { #expect(try await owner.login("new0", "pw").status == 200) }
            let limited = try await owner.login("new0", "pw")
            #expect(limited.status == 429 && (limited.retryAfter ?? 0) > 0)
            await clock.advance(by: .seconds(61))
            #expect(try await owner.login("new0", "pw").status == 200)
        }
    }
}
