/// An asynchronous piece of work started on demand, with a snapshot of the state and a way to
/// send events back.
///
/// Use a command for work that a user action starts once (save, upload, refresh); use a
/// ``Feedback`` for work that the state itself calls for and that must stop when the state no
/// longer does.
///
/// ```swift
/// struct FetchPlayers: Command {
///     let api: PlayersAPI
///     func execute(state: Roster, send: Send<Roster.Event>) async {
///         do { await send(.loaded(try await api.players())) }
///         catch { await send(.failed("Could not load the players")) }
///     }
/// }
/// system.execute(FetchPlayers(api: api))
/// ```
///
/// A command runs until it returns. Stopping or releasing its system cancels it, and from then
/// on nothing it sends is reduced.
public protocol Command<State, Event>: Sendable {
    associatedtype State: Sendable
    associatedtype Event: Sendable

    /// Does the work. `state` is the system's state when the command was started.
    func execute(state: State, send: Send<Event>) async
}
