import HTTPTypes
import StateLoopWire

/// Where trouble inflicted on purpose reaches a server's pushes: upgrades refused, values lost
/// or followed by a hint, sockets cut after a while. Package-only: apps reach it through
/// StateLoopServerTesting's `PushFaults`, so that a product server's API has no such hook.
package protocol PushFaultHooks: Sendable {
    /// Asked for each push upgrade once its access is granted: the status to refuse it with, or
    /// `nil` to let it through.
    func refusal(of key: ResourceKey) -> HTTPResponse.Status?

    /// Asked once per socket as it opens: what becomes of that socket's pushes.
    func socket(following key: ResourceKey) -> any PushSocketFaultHooks
}

/// The trouble one push socket meets.
package protocol PushSocketFaultHooks: Sendable {
    /// What becomes of the push of `version` on this socket.
    func fate(of version: Version) -> PushHookFate

    /// Whether the socket may be cut at all: ``cut()`` runs (as a task of its own, for the
    /// socket's life) only if so.
    var mayCut: Bool { get }

    /// Returns when the socket is to be cut, as a lost connection would end it; never returns
    /// to keep it. Cancelled when the socket closes for another reason.
    func cut() async
}

/// What becomes of one push.
package enum PushHookFate: Sendable {
    /// Sent as usual.
    case send
    /// Lost: the client never sees it.
    case drop
    /// Sent, then followed by a `{"changed": true}` hint, so the client pulls what it just got.
    case sendWithHint
}
