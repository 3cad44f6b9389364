import Observation

/// An `Observable` view of a ``System``'s state, for SwiftUI and anything else built on the
/// Observation framework.
///
/// Reading a property through it (`model.username`) registers interest in that property only,
/// so a view that reads `username` is not invalidated when `password` changes. Properties are
/// compared with `==` when their type is `Equatable`; reading a property of another type, or the
/// whole ``snapshot``, registers interest in every change.
///
/// Create it with ``System/observedState()``. It is updated synchronously on the system's actor,
/// so for SwiftUI create the system on the main actor.
@dynamicMemberLookup
public final class ObservedState<State>: Observable {
    private let registrar = ObservationRegistrar()
    private var storage: State
    /// The properties read so far, each with a test of whether it changed between two states.
    private var readProperties: [PartialKeyPath<State>: (State, State) -> Bool] = [:]
    private var subscription: StateSubscription?

    init(_ state: State) {
        storage = state
    }

    /// The whole state. Reading it registers interest in every change.
    public var snapshot: State {
        registrar.access(self, keyPath: \.snapshot)
        return storage
    }

    /// One property of the state. Reading it registers interest in that property only.
    public subscript<Value: Equatable>(dynamicMember keyPath: KeyPath<State, Value>) -> Value {
        if readProperties[keyPath] == nil {
            readProperties[keyPath] = { $0[keyPath: keyPath] != $1[keyPath: keyPath] }
        }
        registrar.access(self, keyPath: \.[property: keyPath])
        return storage[keyPath: keyPath]
    }

    /// One property of the state whose type is not `Equatable`: any new state counts as a change.
    public subscript<Value>(dynamicMember keyPath: KeyPath<State, Value>) -> Value {
        if readProperties[keyPath] == nil {
            readProperties[keyPath] = { _, _ in true }
        }
        registrar.access(self, keyPath: \.[property: keyPath])
        return storage[keyPath: keyPath]
    }

    /// The key path component that observation tracks for one property of the state.
    private subscript(property keyPath: PartialKeyPath<State>) -> Void {
        ()
    }

    func update(_ newState: State) {
        let oldState = storage
        let changed = readProperties.filter { $0.value(oldState, newState) }.map(\.key)
        registrar.willSet(self, keyPath: \.snapshot)
        for keyPath in changed {
            registrar.willSet(self, keyPath: \.[property: keyPath])
        }
        storage = newState
        for keyPath in changed {
            registrar.didSet(self, keyPath: \.[property: keyPath])
        }
        registrar.didSet(self, keyPath: \.snapshot)
    }

    func keep(_ subscription: StateSubscription) {
        self.subscription = subscription
    }
}

extension System {
    /// An `Observable` view of the state that invalidates readers per property, kept up to date
    /// until the system stops. See ``ObservedState``.
    public func observedState() -> ObservedState<State> {
        let model = ObservedState(state)
        model.keep(observe { [weak model] state in model?.update(state) })
        return model
    }
}
