import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The small file beside a ``SQLiteStore``'s data file that remembers how far the store's
/// history went: the change feed's newest position, that entry's commit time, the epoch, and
/// the data file's generation (a random number kept in the file's meta table, so that a mark
/// beside a different file is recognised as not its own).
///
/// Why a second file: a restored copy of the data file carries its own idea of how far it got,
/// which is exactly what went back; the mark is not part of the copy, so at the next open the
/// store can see that the data is behind what it once handed out.
///
/// The mark is rewritten after each commit that fed the change feed, before the commit's
/// observers run and before the write returns: a value's version leaves the store (in a push
/// or an answer) only after the mark covers it. A read can see a commit a moment before the
/// mark does; only a crash in that moment followed by a restore of a copy taken just before
/// it would go unseen. A mark ahead of the data (a power cut that kept the mark and lost the
/// commit) costs a new epoch, which is right: a client may have seen the lost commit. Stores
/// of several processes writing one file each rewrite the mark after their own commits, so
/// one may leave it a commit behind another's: the check then covers a little less, never
/// more. An open rewrites it inside its check's transaction, under the file's write lock.
///
/// The record has a fixed length and is written in one `pwrite` at offset 0, so a process
/// crash leaves the old record or the new one; a checksum tells a torn one (a power cut) from
/// a good one. No fsync per commit: a mark lost in a power cut is only less protection for a
/// restore that follows, and the next open rewrites it from the data.
final class HighWaterMark: Sendable {
    /// What the mark says.
    struct Record: Equatable {
        /// The data file's generation (`stateloop_meta`'s `generation`).
        var generation: UInt64
        /// The epoch the data was in.
        var epoch: UInt64
        /// The change feed's newest position (0 before any entry).
        var position: UInt64
        /// That entry's commit time, in microseconds since 1970, as stored in the feed.
        var time: Int64
    }

    /// A mark as found on disk.
    enum Found: Equatable {
        /// No mark (or an empty one): the first open with marks, or a data file copied
        /// without it. No information.
        case missing
        /// A mark whose record cannot be read.
        case unreadable
        /// A mark that reads.
        case record(Record)
    }

    /// The mark's file.
    let path: String
    /// The open file, kept for the store's lifetime; -1 once closed.
    private let descriptor: Mutex<Int32>

    /// The mark of the data file at `dataPath`.
    static func path(for dataPath: String) -> String {
        dataPath + "-highwater"
    }

    /// Opens (or creates) the mark at `path` for writing.
    init(path: String) throws {
        let opened = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard opened >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        self.path = path
        descriptor = Mutex(opened)
    }

    deinit {
        descriptor.withLock { if $0 >= 0 { _ = close($0) } }
    }

    /// Replaces the record with `record`; `sync` also flushes it to the disk (once per open:
    /// the mark then survives a power cut at least as it was when the store opened).
    func write(_ record: Record, sync: Bool = false) throws {
        let bytes = Array(Self.encode(record).utf8)
        try descriptor.withLock { descriptor in
            let written = bytes.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
            guard written == bytes.count else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
            if sync, fsync(descriptor) != 0 { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        }
    }

    /// Reads the mark at `path`.
    static func read(at path: String) -> Found {
        guard let data = FileManager.default.contents(atPath: path) else { return .missing }
        if data.isEmpty { return .missing }
        guard let text = String(data: data, encoding: .utf8), let record = decode(text) else { return .unreadable }
        return .record(record)
    }

    /// The first word of a record: what the file is and the format's version.
    private static let header = "stateloop-high-water-mark 1"

    /// One line of fixed length: the header, four zero-padded numbers, a checksum of what
    /// comes before it.
    static func encode(_ record: Record) -> String {
        func padded(_ value: UInt64) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, 20 - digits.count)) + digits
        }
        let body =
            "\(header) g=\(padded(record.generation)) e=\(padded(record.epoch)) p=\(padded(record.position)) t=\(padded(UInt64(bitPattern: record.time)))"
        let sum = String(checksum(body), radix: 16)
        return body + " c=" + String(repeating: "0", count: 16 - sum.count) + sum + "\n"
    }

    /// The record in `text`, or `nil` when it is not one (a wrong checksum included).
    static func decode(_ text: String) -> Record? {
        let line = text.hasSuffix("\n") ? String(text.dropLast()) : text
        guard let split = line.range(of: " c=", options: .backwards) else { return nil }
        let body = String(line[..<split.lowerBound])
        guard let sum = UInt64(line[split.upperBound...], radix: 16), sum == checksum(body), body.hasPrefix(header + " ") else { return nil }
        var fields: [String: UInt64] = [:]
        for field in body.dropFirst(header.count + 1).split(separator: " ") {
            let parts = field.split(separator: "=", maxSplits: 1)
            guard parts.count == 2, let value = UInt64(parts[1]) else { return nil }
            fields[String(parts[0])] = value
        }
        guard let generation = fields["g"], let epoch = fields["e"], let position = fields["p"], let time = fields["t"] else { return nil }
        return Record(generation: generation, epoch: epoch, position: position, time: Int64(bitPattern: time))
    }

    /// FNV-1a, 64 bits: enough to tell a torn record from a whole one.
    private static func checksum(_ text: String) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
        }
        return hash
    }
}
