import NightrideModel
import StateLoopSync

/// A ride action as an optimistic mutation: shown at once as the status the server is expected
/// to reach, sent as the action itself (the body of `POST /me/ride`).
public struct RideMutation: Mutation, Hashable {
    /// The action sent.
    public var action: RideAction

    /// A mutation for `action`.
    public init(_ action: RideAction) {
        self.action = action
    }

    /// The status the server moves to on success. An action that does not fit the status
    /// changes nothing, and the server's refusal removes it.
    public func apply(to status: inout RideStatus) {
        switch (action, status) {
        case (.request(let destination), .none):
            status = .pending(Ride(id: "requested", passenger: "", destination: destination))
        case (.cancel, .pending), (.cancel, .approaching):
            status = .none
        case (.accept, .incoming(let ride)):
            status = .approaching(ride)
        case (.arrive, .approaching(let ride)):
            status = .riding(ride)
        case (.finish, .riding):
            status = .none
        case (.finishSurvey, .survey), (.rate, .survey):
            status = .none
        default:
            break
        }
    }

    public init(from decoder: any Decoder) throws {
        action = try RideAction(from: decoder)
    }

    public func encode(to encoder: any Encoder) throws {
        try action.encode(to: encoder)
    }
}
