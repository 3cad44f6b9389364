import Foundation
import NightrideHarness
import NightrideServer

/// The verdict of a demo run.
public struct DemoReport: Sendable {
    /// One client's numbers.
    public struct ClientRow: Sendable {
        /// The client's user.
        public var user: String
        /// Distinct screens (or versions behind them) shown.
        public var screensShown: Int
        /// Of those, the ones shaped by an unconfirmed mutation.
        public var optimisticScreens: Int
        /// Screens invalid for the server's state (must be none).
        public var violations: [ScreenAudit.Violation]
        /// HTTP pulls its resources made.
        public var requests: Int
        /// Events its journal holds.
        public var eventsJournaled: Int64
    }

    /// How long the clients took to show the server's state after a fault ended.
    public struct Convergence: Sendable {
        /// The fault.
        public var fault: String
        /// The time to converge.
        public var time: Duration
    }

    /// The longest convergence allowed.
    public static let convergenceBound: Duration = .seconds(2)

    /// The seed of the faults.
    public var seed: UInt64
    /// Per client.
    public var clients: [ClientRow]
    /// Per fault.
    public var convergence: [Convergence]
    /// Subscribers sharing each resource's requests in a client.
    public var subscribersPerResource: Int
    /// The server's counters.
    public var serverStats: ServerStats
    /// Steps that failed.
    public var failures: [String]
    /// How long the run took.
    public var duration: Duration

    /// Whether the verdict holds: every step done, no invalid screen, every convergence
    /// within the bound.
    public var passed: Bool {
        failures.isEmpty && clients.allSatisfy(\.violations.isEmpty)
            && !convergence.isEmpty && convergence.allSatisfy { $0.time <= Self.convergenceBound }
    }

    /// The verdict table.
    public var table: String {
        var lines: [String] = []
        lines.append("")
        lines.append("Verdict (seed \(seed), \(String(format: "%.1f", duration.seconds)) s)")
        lines.append("| client | screens shown | optimistic | invalid for the server's state | pulls | pulls without sharing | events journaled |")
        lines.append("|---|---|---|---|---|---|---|")
        for row in clients {
            lines.append(
                "| \(row.user) | \(row.screensShown) | \(row.optimisticScreens) | \(row.violations.count) | \(row.requests) | \(row.requests * subscribersPerResource) | \(row.eventsJournaled) |"
            )
        }
        lines.append("")
        lines.append("| fault | time to converge | bound |")
        lines.append("|---|---|---|")
        for item in convergence {
            lines.append(
                "| \(item.fault) | \(String(format: "%.0f ms", item.time.seconds * 1_000)) | \(item.time <= Self.convergenceBound ? "ok" : "TOO SLOW") (≤ 2 s) |"
            )
        }
        lines.append("")
        let stats = serverStats
        lines.append(
            "Server: \(stats.requests.values.reduce(0, +)) requests, \(stats.pushesSent) pushes sent, \(stats.pushesDropped) dropped by faults, \(stats.forcedDisconnects) sockets cut."
        )
        for row in clients {
            for violation in row.violations {
                lines.append("INVALID: \(violation)")
            }
        }
        for failure in failures {
            lines.append("FAILED: \(failure)")
        }
        lines.append(passed ? "PASS: no invalid screen, every client converged within 2 s." : "FAIL")
        return lines.joined(separator: "\n")
    }
}
