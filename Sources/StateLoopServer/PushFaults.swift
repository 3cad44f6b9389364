import HTTPTypes
import StateLoopWire

/// Trouble a demo or a test inflicts on a server's pushes, so that its clients meet a bad
/// network on purpose: upgrades refused, values lost or followed by a hint, sockets cut after a
/// while. Package-only: a product server never needs it; Nightride's fault plan is the one user.
package protocol PushFaults: Sendable {
    /// Asked for each push upgrade once its access is granted: the status to refuse it with (503
    /// while the network is "cut", say), or `nil` to let it through.
    func refusal(of key: ResourceKey) -> HTTPResponse.Status?

    /// Asked once per socket as it opens: what becomes of that socket's pushes.
    func socket(following key: ResourceKey) -> any PushSocketFaults
}

/// The trouble one push socket meets.
package protocol PushSocketFaults: Sendable {
    /// What becomes of the push of `version` on this socket.
    func fate(of version: Version) -> PushFate

    /// Whether the socket may be cut at all: ``cut()`` runs (as a task of its own, for the
    /// socket's life) only if so.
    var mayCut: Bool { get }

    /// Returns when the socket is to be cut, as a lost connection would end it; never returns
    /// to keep it. Cancelled when the socket closes for another reason.
    func cut() async
}

/// What becomes of one push.
package enum PushFate: Sendable {
    /// Sent as usual.
    case send
    /// Lost: the client never sees it.
    case drop
    /// Sent, then followed by a `{"changed": true}` hint, so the client pulls what it just got.
    case sendWithHint
}
