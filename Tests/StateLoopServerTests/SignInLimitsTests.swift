import StateLoopServer
import Testing

/// The kit's sign-in limits, on time given by hand: guessing is slow, nobody is locked out, and
/// sign-ups and sessions cannot be made by the thousand.
@Suite("SignInLimits")
struct SignInLimitsTests {
    /// Small limits, reached in a few attempts.
    let limits = SignInLimits(
        SignInLimits.Policy(
            failuresPerPair: 3, failuresPerPairLonger: 5, failuresPerName: 6, failuresPerAddress: 8, successesPerName: 4,
            signUpsPerAddress: 2, window: .seconds(60), backoffWindow: .seconds(3_600), signUpWindow: .seconds(3_600),
            knownPairLifetime: .seconds(86_400)
        )
    )

    @Test("a pair that keeps failing waits, first the window, then the longer backoff; the owner from another address never waits")
    func pairBackoff() {
        let now = Duration.seconds(1_000)
        for _ in 0..<3 { limits.recordFailure(account: "ann", peer: "10.0.0.9", at: now) }
        #expect(limits.wait(account: "ann", peer: "10.0.0.9", at: now) == .seconds(60))
        #expect(limits.wait(account: "ann", peer: "10.0.0.1", at: now) == nil, "the owner's address is not the guesser's")
        // The window passes; two more failures reach the hour's count.
        let later = now + .seconds(61)
        #expect(limits.wait(account: "ann", peer: "10.0.0.9", at: later) == nil)
        for _ in 0..<2 { limits.recordFailure(account: "ann", peer: "10.0.0.9", at: later) }
        let wait = limits.wait(account: "ann", peer: "10.0.0.9", at: later)
        #expect(wait != nil && wait! > .seconds(3_000), "the longer wait: \(String(describing: wait))")
        #expect(limits.wait(account: "ann", peer: "10.0.0.1", at: later) == nil)
    }

    @Test("a name under attack from many addresses: each address that failed at it waits the window; an address that never failed goes ahead")
    func nameUnderAttack() {
        let now = Duration.seconds(500)
        for address in 1...6 { limits.recordFailure(account: "bob", peer: "10.0.1.\(address)", at: now) }
        #expect(limits.wait(account: "bob", peer: "10.0.1.1", at: now) != nil, "one guess per failing address while under attack")
        #expect(limits.wait(account: "bob", peer: "10.0.2.1", at: now) == nil, "an address with no failure at the name")
        #expect(limits.wait(account: "bob", peer: "10.0.1.1", at: now + .seconds(61)) == nil, "the window passed")
    }

    @Test("an address guessing at many names tries no new name, but the names that signed in from it lately still do")
    func guessingAddress() {
        let now = Duration.seconds(200)
        limits.recordSuccess(account: "kim", peer: "10.0.3.1", at: now)
        for index in 0..<8 { limits.recordFailure(account: "name\(index)", peer: "10.0.3.1", at: now) }
        #expect(limits.wait(account: "joe", peer: "10.0.3.1", at: now) != nil, "a name new to the address waits")
        #expect(limits.wait(account: "kim", peer: "10.0.3.1", at: now) == nil, "kim signed in from there: not held back")
        #expect(limits.wait(account: "joe", peer: "10.0.3.2", at: now) == nil, "another address")
    }

    @Test("sign-ups are counted per address and successes per name, the owner's own included")
    func signUpsAndSuccesses() {
        let now = Duration.seconds(10)
        for _ in 0..<2 {
            #expect(limits.signUpWait(peer: "10.0.4.1", at: now) == nil)
            limits.recordSignUp(peer: "10.0.4.1", at: now)
        }
        #expect(limits.signUpWait(peer: "10.0.4.1", at: now) != nil)
        #expect(limits.signUpWait(peer: "10.0.4.2", at: now) == nil)
        for _ in 0..<4 { limits.recordSuccess(account: "ida", peer: "10.0.4.3", at: now) }
        #expect(limits.wait(account: "ida", peer: "10.0.4.3", at: now) != nil, "each sign-in makes a stored session")
        #expect(SignInLimits(.scriptedClients).signUpWait(peer: "10.0.4.1", at: now) == nil)
    }
}
