import NightrideClient
import NightrideDemo
import NightrideModel
import StateLoopSync
import Testing

@testable import NightrideHarness
@testable import NightrideServer

@Suite("ScreenAudit: what counts as an invalid screen")
struct ScreenAuditTests {
    /// Bob logs in at 0 s (driver mode v1 off, ride v1 none), switches on at 1 s (v2), and the
    /// server switches him off at 5 s (v3).
    func history() throws -> ChangeLog {
        var log = ChangeLog()
        for (seconds, counter, value) in [
            (0, 1, UserValueContent.driverMode(false)), (0, 1, .ride(.none)), (1, 2, .driverMode(true)), (5, 3, .driverMode(false)),
        ] as [(Int64, UInt64, UserValueContent)] {
            log.append(ChangeRecord(time: .seconds(seconds), user: "bob", version: Version(epoch: Self.epoch, counter: counter), value: value))
        }
        return log
    }

    static let epoch: UInt64 = 9

    func shown(at seconds: Double, _ screen: Screen, driverMode: UInt64, ride: UInt64 = 1) -> ScreenShown {
        var state = ClientState(user: "bob")
        state.driverMode.value = screen == .driverWaiting
        state.driverMode.confirmedVersion = Version(epoch: Self.epoch, counter: driverMode)
        state.ride.value = RideStatus.none
        state.ride.confirmedVersion = Version(epoch: Self.epoch, counter: ride)
        return ScreenShown(time: .seconds(seconds), state: state)
    }

    @Test("screens that follow the server, late by the network's delay, are valid")
    func followingTheServer() throws {
        let log = try history()
        let screens = [
            shown(at: 0.1, .passengerRequesting, driverMode: 1),
            shown(at: 1.2, .driverWaiting, driverMode: 2),
            shown(at: 5.3, .passengerRequesting, driverMode: 3),
        ]
        #expect(ScreenAudit.violations(in: screens, log: log, staleAfter: .seconds(2)).isEmpty)
    }

    @Test("the seed's race: the old driver mode from a slow answer shown after the push is invalid")
    func seedRace() throws {
        let log = try history()
        let screens = [
            shown(at: 1.2, .driverWaiting, driverMode: 2),
            shown(at: 5.1, .passengerRequesting, driverMode: 3),  // the push
            shown(at: 5.2, .driverWaiting, driverMode: 2),  // the slow HTTP answer
        ]
        let violations = ScreenAudit.violations(in: screens, log: log)
        #expect(violations == [.wentBack(screens[2])])
    }

    @Test("a value the server replaced longer ago than the bound is stale")
    func stale() throws {
        let log = try history()
        let screens = [shown(at: 7.5, .driverWaiting, driverMode: 2)]
        #expect(ScreenAudit.violations(in: screens, log: log, staleAfter: .seconds(2)) == [.stale(screens[0], by: .milliseconds(2_500))])
        #expect(ScreenAudit.violations(in: screens, log: log).isEmpty)
    }

    @Test("a version the server never had, or a screen that does not follow from the values, is invalid")
    func unknownAndWrong() throws {
        let log = try history()
        let unknown = shown(at: 1, .driverWaiting, driverMode: 7)
        let violations = ScreenAudit.violations(in: [unknown], log: log)
        guard case .unknownVersion(unknown, let known) = violations.first, violations.count == 1 else {
            Issue.record("expected one unknown version, got \(violations)")
            return
        }
        // The report names the versions shown and the ones the server held.
        #expect(known.contains("driver-mode [e9v1@"))
        #expect("\(violations[0])".contains("driver mode e"))
        var wrong = shown(at: 1.2, .driverWaiting, driverMode: 2)
        wrong.screen = .riding
        #expect(ScreenAudit.violations(in: [wrong], log: log) == [.wrongScreen(wrong, expected: .driverWaiting)])
    }

    @Test("optimistic screens are not audited against the server")
    func optimistic() throws {
        let log = try history()
        var screen = shown(at: 0.5, .driverWaiting, driverMode: 1)
        screen.isOptimistic = true
        #expect(ScreenAudit.violations(in: [screen], log: log).isEmpty)
    }
}
