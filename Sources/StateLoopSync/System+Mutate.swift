import StateLoop

extension System {
    /// Queues `mutation` on `resource` and, in the same step, sends `event` with the resource's
    /// status holding it (``OptimisticResource/status``), so that the state shows the change as
    /// the call returns: a key handler that reads the state, as the user saw it, finds every
    /// earlier key press in it, however fast the presses came.
    ///
    /// ```swift
    /// case .toggleDriverMode:
    ///     let shown = system.state.driverMode.value ?? false
    ///     system.mutate(driverMode, DriverModeChange(on: !shown)) { .driverMode(ResourceSnapshot($0)) }
    /// ```
    ///
    /// The statuses the resource publishes keep reaching the state through
    /// `Feedback.resource(_:event:)`, with the same `event`. One it published before this call
    /// and delivered after it holds less of the queue (its ``StatusPosition`` precedes the one
    /// sent here), and ``ResourceSnapshot/update(to:)`` ignores it: the screen never goes back to
    /// before the press.
    ///
    /// - Returns: the mutation's id.
    @discardableResult
    public func mutate<M: Mutation>(
        _ resource: OptimisticResource<M>,
        _ mutation: M,
        event: (OptimisticStatus<M>) -> Event,
        fileID: StaticString = #fileID,
        line: UInt = #line
    ) -> MutationID {
        let id = resource.mutate(mutation)
        if let status = resource.status { send(event(status), fileID: fileID, line: line) }
        return id
    }
}
