import StateLoop
import StateLoopWire

/// Where a remote resource's data comes from. Transport-agnostic: closures and sequences.
public struct ResourceSources<Value: Sendable>: Sendable {
    /// Fetches the current value (cold: runs on demand).
    public var pull: @Sendable () async throws -> Versioned<Value>
    /// Runs until cancelled, handing each push message to `receive` (hot: messages arrive
    /// whatever the client does).
    public var push: @Sendable (_ receive: @escaping @Sendable (PushMessage<Value>) async -> Void) async -> Void
    /// Runs until cancelled, reporting each change of connectivity.
    public var connectivity: @Sendable (_ report: @escaping @Sendable (Bool) async -> Void) async -> Void

    /// Sources from a pull and, optionally, sequences of push messages and connectivity.
    public init<Push: AsyncSequence & Sendable, Connectivity: AsyncSequence & Sendable>(
        pull: @escaping @Sendable () async throws -> Versioned<Value>,
        push: Push,
        connectivity: Connectivity
    )
    where
        Push.Element == PushMessage<Value>, Push.Failure == Never,
        Connectivity.Element == Bool, Connectivity.Failure == Never
    {
        self.pull = pull
        self.push = { receive in for await message in push { await receive(message) } }
        self.connectivity = { report in for await online in connectivity { await report(online) } }
    }

    /// Sources from a pull only: no push channel, always online.
    public init(pull: @escaping @Sendable () async throws -> Versioned<Value>) {
        self.pull = pull
        self.push = { _ in }
        self.connectivity = { _ in }
    }

    /// Sources from a pull and a sequence of push messages; always online.
    public init<Push: AsyncSequence & Sendable>(
        pull: @escaping @Sendable () async throws -> Versioned<Value>,
        push: Push
    ) where Push.Element == PushMessage<Value>, Push.Failure == Never {
        self.init(pull: pull, push: push, connectivity: AsyncStream<Bool> { _ in })
    }
}
