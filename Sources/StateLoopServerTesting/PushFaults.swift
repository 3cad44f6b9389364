import HTTPTypes
import StateLoopServer
import StateLoopWire

/// Trouble a test or a demo inflicts on a server's pushes, so that its clients meet a bad
/// network on purpose: upgrades refused, values lost or followed by a hint, sockets cut after a
/// while. Set it on a server with ``StateLoopServer/SyncServer/pushFaults``.
///
/// ```swift
/// struct LoseEveryThird: PushFaults {
///     func refusal(of key: ResourceKey) -> HTTPResponse.Status? { nil }
///     func socket(following key: ResourceKey) -> any PushSocketFaults { EveryThird() }
/// }
/// server.pushFaults = LoseEveryThird()
/// ```
///
/// Decide from a seed, not from the clock or a shared random source, so that a run can be
/// played again.
public protocol PushFaults: Sendable {
    /// Asked for each push upgrade once its access is granted: the status to refuse it with (503
    /// while the network is "cut", say), or `nil` to let it through.
    func refusal(of key: ResourceKey) -> HTTPResponse.Status?

    /// Asked once per socket as it opens: what becomes of that socket's pushes.
    func socket(following key: ResourceKey) -> any PushSocketFaults
}

/// The trouble one push socket meets.
public protocol PushSocketFaults: Sendable {
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
public enum PushFate: Sendable, Hashable {
    /// Sent as usual.
    case send
    /// Lost: the client never sees it, and must notice the gap by pulling (a poll, a hint, a
    /// reconnection). A collection's difference, which a later one does not make good, is sent
    /// as a hint instead, so that its reader catches up from its cookie.
    case drop
    /// Sent, then followed by a `{"changed": true}` hint, so the client pulls what it just got.
    case sendWithHint
}

extension SyncServer {
    /// Trouble inflicted on this server's pushes; `nil`, the default, for none. Applies to the
    /// sockets opened after it is set.
    public var pushFaults: (any PushFaults)? {
        get { (faultHooks as? FaultHooks)?.faults }
        set { faultHooks = newValue.map(FaultHooks.init) }
    }
}

/// An app's ``PushFaults`` as the kit's hooks.
private struct FaultHooks: PushFaultHooks {
    let faults: any PushFaults

    func refusal(of key: ResourceKey) -> HTTPResponse.Status? {
        faults.refusal(of: key)
    }

    func socket(following key: ResourceKey) -> any PushSocketFaultHooks {
        SocketHooks(faults: faults.socket(following: key))
    }
}

/// An app's ``PushSocketFaults`` as the kit's hooks.
private struct SocketHooks: PushSocketFaultHooks {
    let faults: any PushSocketFaults

    func fate(of version: Version) -> PushHookFate {
        switch faults.fate(of: version) {
        case .send: .send
        case .drop: .drop
        case .sendWithHint: .sendWithHint
        }
    }

    var mayCut: Bool {
        faults.mayCut
    }

    func cut() async {
        await faults.cut()
    }
}
