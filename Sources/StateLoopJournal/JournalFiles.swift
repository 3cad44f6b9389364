import Foundation

/// Moving a journal's files (the database and its WAL) out of the way, for the
/// set-aside-and-start-fresh policy.
enum JournalFiles {
    /// The suffixes SQLite adds beside a database in WAL mode.
    static let companions = ["", "-wal", "-shm"]

    /// Renames the journal and its companions to `<path>.unreadable-<date>` (with a counter if
    /// that exists) and returns the new path of the database.
    static func setAside(_ path: String) throws(JournalError) -> String {
        let fileManager = FileManager.default
        let stamp = Self.stamp(Date())
        var target = "\(path).unreadable-\(stamp)"
        var counter = 1
        while fileManager.fileExists(atPath: target) {
            counter += 1
            target = "\(path).unreadable-\(stamp)-\(counter)"
        }
        for suffix in companions where fileManager.fileExists(atPath: path + suffix) {
            do {
                try fileManager.moveItem(atPath: path + suffix, toPath: target + suffix)
            } catch {
                throw JournalError.cannotOpen(
                    path: path, detail: "could not set the unreadable file aside: \(error)"
                )
            }
        }
        return target
    }

    /// `20261122T101500Z`: sortable, and valid in a file name everywhere.
    private static func stamp(_ date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        func two(_ value: Int?) -> String {
            let value = value ?? 0
            return value < 10 ? "0\(value)" : "\(value)"
        }
        return "\(parts.year ?? 0)\(two(parts.month))\(two(parts.day))T\(two(parts.hour))\(two(parts.minute))\(two(parts.second))Z"
    }
}
