/// What an app sends to the inspector over its socket: exactly one member set, so that each
/// frame reads as `{"hello": …}`, `{"records": […]}`, `{"previewStatus": …}` or
/// `{"dispatched": …}` (see StateLoopInspector's article “The inspector”).
public struct AppMessage: Codable, Sendable, Hashable {
    /// The first message of every connection.
    public var hello: Hello?
    /// Records, oldest first.
    public var records: [InspectorRecord]?
    /// What the app shows after a preview request.
    public var previewStatus: PreviewStatus?
    /// What became of an event the inspector sent.
    public var dispatched: DispatchStatus?
    /// The states a system's later events lead to without an event the inspector skipped.
    public var recomputed: Recomputed?

    /// Who is connecting: the same `session` on every reconnection of one app's inspector.
    public struct Hello: Codable, Sendable, Hashable {
        public var session: String
        public var app: String
        public var redaction: Redaction
        public var format: Int
        /// The session's time (``InspectorRecord/time``) as the hello was sent: the inspector
        /// places the app's records on its own clock from it, so that the records of apps whose
        /// clocks differ line up on one timeline.
        public var elapsed: Double?

        public init(session: String, app: String, redaction: Redaction, format: Int = 1, elapsed: Double? = nil) {
            self.session = session
            self.app = app
            self.redaction = redaction
            self.format = format
            self.elapsed = elapsed
        }
    }

    public init(hello: Hello) {
        self.hello = hello
    }

    public init(records: [InspectorRecord]) {
        self.records = records
    }

    public init(previewStatus: PreviewStatus) {
        self.previewStatus = previewStatus
    }

    public init(dispatched: DispatchStatus) {
        self.dispatched = dispatched
    }

    public init(recomputed: Recomputed) {
        self.recomputed = recomputed
    }
}

/// The states `system`'s recorded events lead to when the event of record `skipped` is left out
/// (``InspectorCommand/Skip``): reduced again, from the state before it, by the app's reducer,
/// with no effect run and the app's own state untouched; or `problem` says why not.
public struct Recomputed: Codable, Sendable, Hashable {
    /// One later event's state without the skipped one.
    public struct Step: Codable, Sendable, Hashable {
        /// The record of the event, as recorded.
        public var sequence: UInt64
        /// The state the event leads to without the skipped one, redacted.
        public var state: JSONValue

        public init(sequence: UInt64, state: JSONValue) {
            self.sequence = sequence
            self.state = state
        }
    }

    public var system: String
    public var skipped: UInt64
    /// The later events' states, in order: at most ``limit``.
    public var states: [Step]
    /// Whether later events were left out, past ``limit``.
    public var truncated: Bool?
    public var problem: String?

    /// How many later states one answer holds.
    public static let limit = 500

    public init(system: String, skipped: UInt64, states: [Step] = [], truncated: Bool? = nil, problem: String? = nil) {
        self.system = system
        self.skipped = skipped
        self.states = states
        self.truncated = truncated
        self.problem = problem
    }
}

/// What became of an event the inspector sent to `system` (``InspectorCommand/Dispatch``):
/// sent to the system, or `problem` says why not (the system does not accept events from the
/// inspector, the JSON is not one of its events).
public struct DispatchStatus: Codable, Sendable, Hashable {
    public var system: String
    public var problem: String?

    public init(system: String, problem: String? = nil) {
        self.system = system
        self.problem = problem
    }
}

/// What a system shows its observers: the state recorded at `sequence` (a preview), or its live
/// state when `sequence` is `nil`; `problem` says why a preview asked for could not be shown.
public struct PreviewStatus: Codable, Sendable, Hashable {
    public var system: String
    public var sequence: UInt64?
    public var problem: String?

    public init(system: String, sequence: UInt64?, problem: String? = nil) {
        self.system = system
        self.sequence = sequence
        self.problem = problem
    }
}

/// What the inspector sends to an app: exactly one member set.
public struct InspectorCommand: Codable, Sendable, Hashable {
    /// The answer to ``AppMessage/hello``: the last sequence the inspector holds of the
    /// session, 0 if none. The app sends what follows it.
    public var welcome: Welcome?
    /// Show the state recorded at a sequence.
    public var preview: Preview?
    /// Show the live state again.
    public var endPreview: EndPreview?
    /// Send an event to a system.
    public var dispatch: Dispatch?
    /// Reduce a system's later events again without one of them.
    public var skip: Skip?

    public struct Welcome: Codable, Sendable, Hashable {
        public var lastSequence: UInt64

        public init(lastSequence: UInt64) {
            self.lastSequence = lastSequence
        }
    }

    public struct Preview: Codable, Sendable, Hashable {
        public var system: String
        public var sequence: UInt64

        public init(system: String, sequence: UInt64) {
            self.system = system
            self.sequence = sequence
        }
    }

    public struct EndPreview: Codable, Sendable, Hashable {
        public var system: String

        public init(system: String) {
            self.system = system
        }
    }

    /// An event for `system`, as its `Codable` form: the app decodes it as the system's event
    /// type and sends it, if the system accepts events from the inspector.
    public struct Dispatch: Codable, Sendable, Hashable {
        public var system: String
        public var event: JSONValue

        public init(system: String, event: JSONValue) {
            self.system = system
            self.event = event
        }
    }

    /// Reduce `system`'s events after record `sequence` again, from the state before it,
    /// without it: the answer is a ``Recomputed``.
    public struct Skip: Codable, Sendable, Hashable {
        public var system: String
        public var sequence: UInt64

        public init(system: String, sequence: UInt64) {
            self.system = system
            self.sequence = sequence
        }
    }

    public init(welcome: Welcome) {
        self.welcome = welcome
    }

    public init(preview: Preview) {
        self.preview = preview
    }

    public init(endPreview: EndPreview) {
        self.endPreview = endPreview
    }

    public init(dispatch: Dispatch) {
        self.dispatch = dispatch
    }

    public init(skip: Skip) {
        self.skip = skip
    }
}
