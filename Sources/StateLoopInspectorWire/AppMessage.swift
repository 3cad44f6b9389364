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
}
