import Synchronization

/// One connection attempt of a push source, shared by the attempt and the deadline of its
/// handshake: whichever comes first decides the attempt's outcome.
///
/// The push source waits on the gate, not on the attempt, because an attempt can hang for good
/// before its upgrade (see `WebSocketPush`'s `handshakeTimeout`) and ignores cancellation
/// there. An attempt whose upgrade succeeds after the deadline is turned away, so that it never
/// runs beside the attempt that replaced it.
final class HandshakeGate<Outcome: Sendable>: Sendable {
    private enum Phase {
        case handshaking
        /// The server accepted the upgrade in time: only the attempt's end decides now.
        case upgraded
        case decided(Outcome)
    }

    private struct State {
        var phase = Phase.handshaking
        var waiter: CheckedContinuation<Outcome, Never>?
    }

    private let state = Mutex(State())

    /// Called by the attempt once the server accepted its upgrade; `false` when the attempt was
    /// given up meanwhile, and must close at once.
    func upgraded() -> Bool {
        state.withLock { state in
            guard case .handshaking = state.phase else { return false }
            state.phase = .upgraded
            return true
        }
    }

    /// The attempt ended with `outcome`; ignored when it was given up before.
    func finish(_ outcome: Outcome) {
        decide(outcome) { phase in
            if case .decided = phase { false } else { true }
        }
    }

    /// The deadline passed (or the source stopped) before the upgrade: decides `outcome`. An
    /// attempt that has upgraded, or ended, is left to its own outcome.
    func giveUp(with outcome: Outcome) {
        decide(outcome) { phase in
            if case .handshaking = phase { true } else { false }
        }
    }

    /// The outcome, once decided.
    func outcome() async -> Outcome {
        await withCheckedContinuation { continuation in
            let decided: Outcome? = state.withLock { state in
                if case .decided(let outcome) = state.phase { return outcome }
                state.waiter = continuation
                return nil
            }
            if let decided { continuation.resume(returning: decided) }
        }
    }

    private func decide(_ outcome: Outcome, if allowed: (Phase) -> Bool) {
        let waiter: CheckedContinuation<Outcome, Never>? = state.withLock { state in
            guard allowed(state.phase) else { return nil }
            state.phase = .decided(outcome)
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: outcome)
    }
}
