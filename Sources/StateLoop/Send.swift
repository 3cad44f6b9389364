/// The handle an effect or a command uses to send events back into its ``System``.
///
/// A `Send` is tied to the effect that received it. Once that effect is cancelled (its request
/// changed or went away, or the system stopped), every event sent through the handle is
/// discarded, including one that was already on its way to the system when the cancellation
/// happened. That is what makes stale events impossible, whatever the effect does.
///
/// Calling it suspends until the system has reduced (or discarded) the event, so an effect that
/// sends several events sees each one applied in order.
public struct Send<Event: Sendable>: Sendable {
    @usableFromInline let receiver: any EventReceiver<Event>
    @usableFromInline let origin: OriginID

    @inlinable
    init(receiver: any EventReceiver<Event>, origin: OriginID) {
        self.receiver = receiver
        self.origin = origin
    }

    /// Sends `event` to the system, unless the effect that owns this handle was cancelled.
    public func callAsFunction(_ event: Event) async {
        await receiver.receive(event, from: origin, senderCancelled: Task.isCancelled)
    }
}

/// Identifies the effect, command or feedback that sent an event, so that the system can tell
/// whether it is still allowed to deliver events.
@usableFromInline
struct OriginID: Hashable, Sendable {
    @usableFromInline let rawValue: UInt64

    @inlinable
    init(rawValue: UInt64) {
        self.rawValue = rawValue
    }
}

/// What a ``Send`` delivers to: the system's core, erased to its event type.
@usableFromInline
protocol EventReceiver<Event>: Sendable {
    associatedtype Event: Sendable
    func receive(_ event: Event, from origin: OriginID, senderCancelled: Bool) async
}

/// Runs `body` on `actor`. Used to hop from an effect back to the system's isolation.
package func perform(on actor: isolated any Actor, _ body: @Sendable () -> Void) {
    body()
}
