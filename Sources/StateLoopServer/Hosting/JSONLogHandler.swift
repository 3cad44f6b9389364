import Foundation
import Logging
import StateLoopWire
import Synchronization

/// A swift-log handler that writes each event as one line of JSON, for log collectors:
/// `time` (ISO 8601, UTC, milliseconds), `level`, `label`, `message`, `source`, then the
/// metadata as fields of their own (a request's id is `hb.request.id`, which every line logged
/// through a request's `context.logger` carries).
///
/// ```swift
/// LoggingSystem.bootstrap { label in JSONLogHandler(label: label) }
/// ```
///
/// ```json
/// {"time":"2026-11-27T11:30:02.518Z","level":"info","label":"app","message":"answered","source":"StateLoopServer","hb.request.id":"9a1c…","route":"POST /me/todos","status":"200"}
/// ```
public struct JSONLogHandler: LogHandler {
    /// The logger's level; `.info` by default.
    public var logLevel: Logger.Level = .info
    /// The logger's metadata, written on each of its lines.
    public var metadata: Logger.Metadata = [:]
    /// Provides metadata on each line (a task-local trace id, say).
    public var metadataProvider: Logger.MetadataProvider?
    private let label: String
    private let write: @Sendable (String) -> Void

    /// A handler for the logger `label` that writes to standard error (or standard output).
    public init(label: String, toStandardOutput: Bool = false, metadataProvider: Logger.MetadataProvider? = nil) {
        self.label = label
        self.metadataProvider = metadataProvider
        let stream = toStandardOutput ? Self.standardOutput : Self.standardError
        write = { line in stream.write(line) }
    }

    /// A handler that hands each line (without its newline) to `write`: for tests.
    public init(label: String, write: @escaping @Sendable (String) -> Void) {
        self.label = label
        self.write = { line in write(String(line.dropLast())) }
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var fields = metadata
        if let provided = metadataProvider?.get() { fields.merge(provided) { _, new in new } }
        if let given = event.metadata { fields.merge(given) { _, new in new } }
        var line = "{\"time\":\(Self.quoted(Self.timestamp(Date())))"
        line += ",\"level\":\(Self.quoted(event.level.rawValue)),\"label\":\(Self.quoted(label))"
        line += ",\"message\":\(Self.quoted(event.message.description)),\"source\":\(Self.quoted(event.source))"
        for (key, value) in fields.sorted(by: { $0.key < $1.key }) {
            // A field named as one of the line's own keeps its value under `metadata.<key>`:
            // a JSON object with a key twice is read differently by different parsers.
            let name = Self.ownKeys.contains(key) ? "metadata." + key : key
            line += ",\(Self.quoted(name)):\(Self.json(value))"
        }
        write(line + "}\n")
    }

    /// The keys every line has.
    private static let ownKeys: Set<String> = ["time", "level", "label", "message", "source"]

    /// A metadata value as JSON: strings as strings, arrays and dictionaries as such.
    private static func json(_ value: Logger.Metadata.Value) -> String {
        switch value {
        case .string(let text): quoted(text)
        case .stringConvertible(let convertible): quoted(convertible.description)
        case .array(let values): "[" + values.map(json).joined(separator: ",") + "]"
        case .dictionary(let fields):
            "{" + fields.sorted { $0.key < $1.key }.map { "\(quoted($0.key)):\(json($0.value))" }.joined(separator: ",") + "}"
        }
    }

    /// `text` as a JSON string (StateLoopWire's writer, shared with the push messages).
    static func quoted(_ text: String) -> String {
        JSONBytes.quoted(text)
    }

    /// `date` as `2026-11-27T11:30:02.518Z`.
    private static func timestamp(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }

    /// One line at a time, whole: lines logged from several threads never interleave.
    private final class Stream: Sendable {
        private let handle: Mutex<FileHandle>

        init(_ handle: FileHandle) {
            self.handle = Mutex(handle)
        }

        func write(_ line: String) {
            // A log line that cannot be written (a closed pipe) is dropped, never a crash.
            handle.withLock { try? $0.write(contentsOf: Data(line.utf8)) }
        }
    }

    private static let standardError = Stream(FileHandle.standardError)
    private static let standardOutput = Stream(FileHandle.standardOutput)
}
