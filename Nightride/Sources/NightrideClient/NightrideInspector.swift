import StateLoopInspector

extension Inspector {
    /// An inspector for Nightride's clients: the password and the session token are redacted
    /// before anything is kept, so they never reach the inspector. Connects to `url`
    /// (`ws://127.0.0.1:PORT/app?token=…`, as `stateloop-inspector` prints it) when given.
    public static func nightride(connectingTo url: String?) -> Inspector {
        let inspector = Inspector(app: "Nightride", redacting: ["password", "token"])
        if let url { inspector.connect(to: url) }
        return inspector
    }

    /// An inspector for a Nightride server (instance `instance` of several, when given): the
    /// same fields redacted, its principal's among them. Connects to `url` when given.
    public static func nightrideServer(instance: Int? = nil, connectingTo url: String?) -> Inspector {
        let inspector = Inspector(app: instance.map { "Nightride server \($0 + 1)" } ?? "Nightride server", redacting: ["password", "token"])
        if let url { inspector.connect(to: url) }
        return inspector
    }
}
