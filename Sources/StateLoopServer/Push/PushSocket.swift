import StateLoopWire

/// Who a push socket is for: the key it follows, the principal's scope it counts under, and
/// the reading client, whose `lastMutationID` its pushes carry.
struct PushSocket: Sendable {
    let key: ResourceKey
    let scope: String
    let client: ClientID?
}
