/// Waits for the first element of `stream` that satisfies `condition`, for at most `limit` of
/// real time (times ``hangGuardScale``), and says so when it gives up instead of hanging.
///
/// For tests of real parts (sockets, processes, journals on disk), whose time is not virtual.
/// Wait for a state that *stays* (the end of a story), never for a transient one: a stream that
/// keeps only the newest element may skip it. A fresh subscription to a stream that replays
/// its latest element starts from the present, so no earlier element is needed.
///
/// - Returns: the element, or `nil` when the stream ended or the limit passed first.
public func firstElement<S: AsyncSequence & Sendable>(
    of stream: S,
    within limit: Duration = .seconds(30),
    where condition: @escaping @Sendable (S.Element) -> Bool
) async -> S.Element? where S.Element: Sendable {
    await withTaskGroup(of: S.Element?.self) { group in
        group.addTask {
            do {
                for try await element in stream where condition(element) {
                    return element
                }
            } catch {}
            return nil
        }
        group.addTask {
            try? await Task.sleep(for: limit * hangGuardScale)
            return nil
        }
        let first = await group.next() ?? nil
        group.cancelAll()
        return first
    }
}

/// What every bound of these waits is multiplied by. A bound is a hang guard, never the
/// product's target: a wait for what comes in milliseconds on an idle machine was missed at
/// 10 s beside two CPU hogs and a build, and a test waiting five times its bound only fails
/// later, never passes wrongly (these waits end as soon as their condition holds). Latency
/// targets are measured by the benchmarks and the chaos reports.
public let hangGuardScale = 5

/// Lets other tasks run until `condition` holds, for at most `limit` of real time (times
/// ``hangGuardScale``); `false` when
/// the limit passed (assert on it, with a message). Bounded by time, not by a number of
/// yields, so a loaded machine makes it slower, never wrong.
public func eventually(
    within limit: Duration = .seconds(30),
    isolation: isolated (any Actor)? = #isolation,
    _ condition: () async -> Bool
) async -> Bool {
    let deadline = ContinuousClock.now + limit * hangGuardScale
    var round = 0
    while ContinuousClock.now < deadline {
        if await condition() { return true }
        round += 1
        if round % 64 == 0 {
            // Mostly yields, so in-process work is seen at once; now and then a short sleep,
            // so a wait on another process or a socket does not spin a core.
            try? await Task.sleep(for: .milliseconds(1))
        } else {
            await Task.yield()
        }
    }
    return await condition()
}
