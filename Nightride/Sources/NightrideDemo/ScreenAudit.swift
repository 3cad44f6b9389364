import NightrideClient
import NightrideHarness
import NightrideServer
import StateLoopSync

/// Checks the screens a client showed against what the server held.
///
/// A confirmed screen is invalid when it shows a version the server never had, when it does
/// not follow from the values it was derived from, when either value is older than one the
/// client showed before (the seed's race: an HTTP answer overtaken by a newer push, shown
/// anyway), or, with `staleAfter`, when a value it shows had been replaced on the server longer
/// than that before. Two values learnt at different moments may show a pair the server never
/// held at one instant (a push for one resource lands before the other's): that transient mix
/// is not counted, it is what any client of two independent resources sees between two pushes.
/// Optimistic screens (an unconfirmed mutation on top) are counted apart: the server never held
/// them by design.
public enum ScreenAudit {
    /// Why a screen is invalid.
    public enum Violation: Sendable, Equatable, CustomStringConvertible {
        /// A version the server never had for this user; `known` lists the versions its log
        /// holds for the user's resources, for the report.
        case unknownVersion(ScreenShown, known: String)
        /// The screen does not follow from the values (a client bug).
        case wrongScreen(ScreenShown, expected: Screen)
        /// A version older than one shown before.
        case wentBack(ScreenShown)
        /// A value the server had replaced `by` before the screen was shown.
        case stale(ScreenShown, by: Duration)

        public var description: String {
            switch self {
            case .unknownVersion(let shown, let known):
                "\(shown.user) showed \(shown.screen) at \(shown.time) from versions the server never had"
                    + " (driver mode \(shown.driverModeVersion.map { "\($0)" } ?? "none"), ride \(shown.rideVersion.map { "\($0)" } ?? "none");"
                    + " the server's log: \(known))"
            case .wrongScreen(let shown, let expected):
                "\(shown.user) showed \(shown.screen) at \(shown.time) instead of \(expected)"
            case .wentBack(let shown):
                "\(shown.user) went back to older data on \(shown.screen) at \(shown.time)"
            case .stale(let shown, let by):
                "\(shown.user) showed \(shown.screen) at \(shown.time), \(by) after the server had moved on"
            }
        }
    }

    /// The violations among `screens` (one client's, in the order shown).
    public static func violations(in screens: [ScreenShown], log: ChangeLog, staleAfter: Duration? = nil) -> [Violation] {
        var violations: [Violation] = []
        var newestDriverMode: Version?
        var newestRide: Version?
        for shown in screens {
            if let previous = newestDriverMode, let version = shown.driverModeVersion, version < previous {
                violations.append(.wentBack(shown))
            }
            if let previous = newestRide, let version = shown.rideVersion, version < previous {
                violations.append(.wentBack(shown))
            }
            newestDriverMode = .max(newestDriverMode, shown.driverModeVersion)
            newestRide = .max(newestRide, shown.rideVersion)
            guard !shown.isOptimistic, shown.screen != .connecting,
                let driverModeVersion = shown.driverModeVersion, let rideVersion = shown.rideVersion
            else { continue }
            let records = log.records(of: shown.user)
            guard let driverMode = span(of: .driverMode, at: driverModeVersion, in: records),
                let ride = span(of: .ride, at: rideVersion, in: records),
                case .driverMode(let isDriver) = driverMode.value,
                case .ride(let status) = ride.value
            else {
                violations.append(.unknownVersion(shown, known: known(in: records)))
                continue
            }
            let expected = Screen(driverMode: isDriver, ride: status, user: shown.user)
            if expected != shown.screen {
                violations.append(.wrongScreen(shown, expected: expected))
            }
            if let staleAfter, let replaced = [driverMode.end, ride.end].compactMap({ $0 }).min(),
                shown.time - replaced > staleAfter
            {
                violations.append(.stale(shown, by: shown.time - replaced))
            }
        }
        return violations
    }

    /// The versions of each resource in `records`, with when they were written, for a report.
    private static func known(in records: [ChangeRecord]) -> String {
        [UserValue.driverMode, .ride].map { resource in
            let versions = records.filter { $0.resource == resource }.map { "\($0.version)@\($0.time)" }
            return "\(resource.rawValue) [\(versions.joined(separator: ", "))]"
        }.joined(separator: "; ")
    }

    private struct Span {
        var value: UserValueContent
        var start: Duration
        var end: Duration?
    }

    /// When the server held `resource` at `version`: from its change to the next one.
    private static func span(of resource: UserValue, at version: Version, in records: [ChangeRecord]) -> Span? {
        let ofResource = records.filter { $0.resource == resource }
        guard let index = ofResource.firstIndex(where: { $0.version == version }) else { return nil }
        let record = ofResource[index]
        let next = ofResource.index(after: index)
        return Span(value: record.value, start: record.time, end: next < ofResource.endIndex ? ofResource[next].time : nil)
    }
}

extension Optional where Wrapped: Comparable {
    fileprivate static func max(_ lhs: Wrapped?, _ rhs: Wrapped?) -> Wrapped? {
        switch (lhs, rhs) {
        case (let lhs?, let rhs?): Swift.max(lhs, rhs)
        case (let value?, nil), (nil, let value?): value
        case (nil, nil): nil
        }
    }
}
