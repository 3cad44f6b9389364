import Logging
import Synchronization

/// What a logger was told, as `level message key=value…` (metadata sorted by key), for a test
/// to read: entries below `level` are left out.
public final class LogRecorder: LogHandler, Sendable {
    private let recorded = Mutex<[String]>([])
    private let level: Logger.Level

    /// A recorder of the entries at `level` and above.
    public init(level: Logger.Level = .trace) {
        self.level = level
    }

    /// Every entry recorded, oldest first.
    public var messages: [String] { recorded.withLock { $0 } }

    public var logLevel: Logger.Level {
        get { level }
        set {}
    }

    public var metadata: Logger.Metadata {
        get { [:] }
        set {}
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { nil }
        set {}
    }

    public func log(event: LogEvent) {
        let fields = (event.metadata ?? [:]).sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        recorded.withLock { $0.append(([event.level.rawValue, event.message.description] + fields).joined(separator: " ")) }
    }
}
