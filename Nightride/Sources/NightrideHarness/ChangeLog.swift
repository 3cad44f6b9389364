import NightrideModel
import StateLoopWire

/// Every change the core made, in order, so that a test or a demo can ask what the server held
/// for a user at a given time and compare it with what a client showed.
///
/// Records are appended with non-decreasing times; when several share a time, the last one is
/// the state at that time. The log grows for the life of the server, which suits a demo.
public struct ChangeLog: Sendable {
    /// All records, oldest first.
    public private(set) var records: [ChangeRecord] = []
    // Positions in `records` per user, so lookups don't scan other users' changes.
    private var positions: [String: [Int]] = [:]

    /// An empty log.
    public init() {}

    mutating func append(_ record: ChangeRecord) {
        positions[record.user, default: []].append(records.count)
        records.append(record)
    }

    /// The records of `user`, oldest first.
    public func records(of user: String) -> [ChangeRecord] {
        (positions[user] ?? []).map { records[$0] }
    }

    /// The user's driver-mode value at `time`; `nil` before the user existed.
    public func driverMode(of user: String, at time: Duration) -> Versioned<Bool>? {
        guard let record = latest(of: user, resource: .driverMode, at: time),
            case .driverMode(let on) = record.value
        else { return nil }
        return Versioned(on, version: record.version)
    }

    /// The user's ride status at `time`; `nil` before the user existed.
    public func rideStatus(of user: String, at time: Duration) -> Versioned<RideStatus>? {
        guard let record = latest(of: user, resource: .ride, at: time),
            case .ride(let status) = record.value
        else { return nil }
        return Versioned(status, version: record.version)
    }

    /// Both of the user's resources at `time`; `nil` before the user existed.
    public func snapshot(of user: String, at time: Duration) -> UserSnapshot? {
        guard let driverMode = driverMode(of: user, at: time), let ride = rideStatus(of: user, at: time) else {
            return nil
        }
        return UserSnapshot(driverMode: driverMode, ride: ride)
    }

    /// Both of the user's resources as last changed; `nil` for a user never seen.
    public func latest(of user: String) -> UserSnapshot? {
        guard let last = positions[user]?.last else { return nil }
        return snapshot(of: user, at: records[last].time)
    }

    /// Every user the log has seen, sorted.
    public var userNames: [String] {
        positions.keys.sorted()
    }

    private func latest(of user: String, resource: UserValue, at time: Duration) -> ChangeRecord? {
        guard let indices = positions[user] else { return nil }
        // Times only grow, so the answer is the last matching record at or before `time`:
        // binary-search the cut, then walk back to the resource wanted.
        var low = 0
        var high = indices.count
        while low < high {
            let middle = (low + high) / 2
            if records[indices[middle]].time <= time { low = middle + 1 } else { high = middle }
        }
        for index in indices[..<low].reversed() where records[index].resource == resource {
            return records[index]
        }
        return nil
    }
}
