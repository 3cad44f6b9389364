import StateLoopServer
import Testing

@Suite("Attempt limiter")
struct AttemptLimiterTests {
    @Test("a key may make `limit` attempts per window; the next waits until the oldest leaves it")
    func slidingWindow() {
        let limiter = AttemptLimiter(limit: 3, per: .seconds(60))
        for second in [0, 10, 20] {
            #expect(limiter.wait(for: "ann", at: .seconds(second)) == nil)
            limiter.record("ann", at: .seconds(second))
        }
        #expect(limiter.wait(for: "ann", at: .seconds(30)) == .seconds(30))
        #expect(limiter.wait(for: "bob", at: .seconds(30)) == nil)
        // At 60 s the first attempt has left the window.
        #expect(limiter.wait(for: "ann", at: .seconds(60)) == nil)
        limiter.record("ann", at: .seconds(60))
        #expect(limiter.wait(for: "ann", at: .seconds(61)) == .seconds(9))
    }

    @Test("memory stays bounded: keys past the window are forgotten, then the oldest")
    func boundedKeys() {
        let limiter = AttemptLimiter(limit: 2, per: .seconds(10), maximumKeys: 100)
        for index in 0..<1_000 {
            limiter.record("name-\(index)", at: .milliseconds(index))
        }
        #expect(limiter.keyCount <= 101)
        // The newest keys are still limited.
        limiter.record("name-999", at: .milliseconds(1_000))
        #expect(limiter.wait(for: "name-999", at: .milliseconds(1_001)) != nil)
    }
}
