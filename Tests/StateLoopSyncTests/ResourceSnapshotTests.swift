import Foundation
import Testing

@testable import StateLoopSync

/// What a journaled screen state keeps of a resource: the value, its version and the pending
/// count, never the health of the launch that wrote it.
@Suite("ResourceSnapshot")
struct ResourceSnapshotTests {
    struct Toggle: Mutation {
        var on: Bool
        func apply(to value: inout Bool) { value = on }
    }

    @Test("encodes value, version and pending count, and no health; decodes as all well, an older encoding's health ignored")
    func healthIsNotEncoded() throws {
        let offline = ResourceHealth(isOffline: true, failure: "connection refused", waitingToSend: 2)
        let snapshot = ResourceSnapshot(value: true, confirmedVersion: Version(epoch: 3, counter: 9), pendingMutations: 2, health: offline)
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let json = String(decoding: try encoder.encode(snapshot), as: UTF8.self)
        #expect(json == #"{"confirmedVersion":{"counter":9,"epoch":3},"pendingMutations":2,"value":true}"#)
        let decoded = try JSONDecoder().decode(ResourceSnapshot<Bool>.self, from: Data(json.utf8))
        #expect(decoded == ResourceSnapshot(value: true, confirmedVersion: Version(epoch: 3, counter: 9), pendingMutations: 2))
        #expect(decoded.health == ResourceHealth())
        // As a screen state written before the health was left out stored it.
        let older = #"{"value":false,"pendingMutations":0,"health":{"isLoading":false,"isSlow":false,"isOffline":true,"isSignedOut":false}}"#
        let fromOlder = try JSONDecoder().decode(ResourceSnapshot<Bool>.self, from: Data(older.utf8))
        #expect(fromOlder.value == false && fromOlder.health == ResourceHealth())
        // Nothing known yet: no value, no version.
        #expect(String(decoding: try encoder.encode(ResourceSnapshot<Bool>()), as: UTF8.self) == #"{"pendingMutations":0}"#)
    }

    @Test("an update with no value known keeps the value and version shown (a relaunch's restored screen), and takes the count and health")
    func unknownValueKeepsTheLastKnown() {
        var shown = ResourceSnapshot(value: true, confirmedVersion: Version(epoch: 1, counter: 4))
        shown.update(to: ResourceSnapshot(value: nil, confirmedVersion: nil, pendingMutations: 1, health: ResourceHealth(isLoading: true)))
        #expect(shown.value == true && shown.confirmedVersion == Version(epoch: 1, counter: 4))
        #expect(shown.pendingMutations == 1 && shown.health.isLoading)
        shown.update(to: ResourceSnapshot(value: false, confirmedVersion: Version(epoch: 1, counter: 5)))
        #expect(shown == ResourceSnapshot(value: false, confirmedVersion: Version(epoch: 1, counter: 5)))
    }

    @Test(
        "from an optimistic status: the visible value, the confirmed version, the queue's length, and a health that says what waits and why the session ended"
    )
    func fromOptimisticStatus() {
        let confirmed = Versioned(false, version: Version(epoch: 1, counter: 2))
        var resource = ResourceStatus(value: confirmed, isOffline: true)
        let pending = [PendingMutation(Toggle(on: true), id: MutationID(client: ClientID(), sequence: 1), queuedAt: Date())]
        let waiting = OptimisticStatus(
            value: true, confirmed: confirmed, mutations: pending, resource: resource, delivery: .waiting(count: 1, failure: nil)
        )
        let snapshot = ResourceSnapshot(waiting)
        #expect(snapshot.value == true && snapshot.confirmedVersion == confirmed.version && snapshot.pendingMutations == 1)
        #expect(snapshot.health == ResourceHealth(isOffline: true, waitingToSend: 1))
        resource.isOffline = false
        resource.failure = ResourceFailure(HTTPStatusError(status: 401), kind: .unauthorized)
        let signedOut = ResourceSnapshot(OptimisticStatus<Toggle>(value: false, confirmed: confirmed, mutations: [], resource: resource))
        #expect(signedOut.health == ResourceHealth(isSignedOut: true), "a refused session is no failure to show")
        #expect(
            ResourceSnapshot(
                OptimisticStatus<Toggle>(
                    value: nil, confirmed: nil, mutations: [], resource: ResourceStatus(value: nil), delivery: .couldNotSend(count: 3))
            ).health.couldNotSend == 3)
    }
}
