import Foundation
import StateLoop
import StateLoopInspectorWire
import StateLoopWire
import Synchronization
import TestSupport
import Testing

@testable import StateLoopInspector
@testable import StateLoopSync

/// Resources watched by the inspector: their statuses, the versions they drop and the steps of
/// each mutation recorded, without the watch changing what they do.
@Suite("inspector: resources")
struct ResourceWatchTests {
    @Test("a watched resource fetches nothing for the watch; its statuses and the versions it drops as outdated are recorded")
    func remoteResource() async throws {
        let pulls = Mutex(0)
        let (pushes, push) = AsyncStream.makeStream(of: PushMessage<String>.self)
        let resource = RemoteResource(
            sources: ResourceSources(
                pull: {
                    pulls.withLock { $0 += 1 }
                    return Versioned("pulled", version: Version(epoch: 1, counter: 1))
                }, push: pushes))
        defer { resource.stop() }
        let inspector = Inspector(app: "Test")
        inspector.watch(resource, named: "notes")
        push.yield(.value(Versioned("second", version: Version(epoch: 1, counter: 2))))
        push.yield(.value(Versioned("late", version: Version(epoch: 1, counter: 1))))
        let records = { inspector.session().records }
        // 30 s: a hang guard (10 s was missed beside two CPU hogs and a release build).
        #expect(await eventually(within: .seconds(30)) { records().contains { $0.kind == .versionDropped } }, "\(records().map(\.kind))")
        let statuses = records().filter { $0.kind == .resource }
        #expect(statuses.last?.status.flatMap { if case .object(let fields) = $0 { fields["version"] } else { nil } } == .string("e1v2"))
        #expect(records().first { $0.kind == .versionDropped }?.version == "e1v1")
        #expect(records().allSatisfy { $0.resource == "notes" && $0.system == "notes" })
        #expect(pulls.withLock { $0 } == 0 && resource.requestsStarted == 0, "the watch made the resource fetch")
    }

    @Test("a watched resource the app releases stops as if unwatched, and its watch ends")
    func releasedResource() async throws {
        let (pushes, push) = AsyncStream.makeStream(of: PushMessage<String>.self)
        var resource: RemoteResource<String>? = RemoteResource(
            sources: ResourceSources(
                pull: {
                    Versioned("pulled", version: Version(epoch: 1, counter: 1))
                }, push: pushes))
        weak let released = resource
        let inspector = Inspector(app: "Test")
        inspector.watch(resource!, named: "notes")
        resource = nil
        #expect(released == nil, "the watch keeps the resource alive")
        push.finish()
    }

    @Test("a mutation's steps: queued, sent, accepted, then confirmed when it leaves the queue; refused when the step that removed it said so")
    func mutationSteps() {
        let client = ClientID()
        var tracker = MutationTracker<Note>()
        var first = PendingMutation(Note(text: "a"), id: MutationID(client: client, sequence: 1))
        let second = PendingMutation(Note(text: "b"), id: MutationID(client: client, sequence: 2))
        #expect(tracker.steps(to: status([first, second], containing: 0)).map(\.outcome) == ["queued", "queued"])
        first.status = .confirmed(Version(epoch: 1, counter: 5))
        let accepted = tracker.steps(to: status([first, second], containing: 0))
        #expect(accepted.map(\.outcome) == ["sent", "accepted"])
        #expect(accepted.last?.version == Version(epoch: 1, counter: 5))
        // The server refused the second, although its number is within the confirmed value's.
        #expect(tracker.note([failure(second.id)]).isEmpty)
        let gone = tracker.steps(to: status([], containing: 2))
        #expect(gone.map { "\($0.id.sequence(of: client) ?? 0) \($0.outcome)" } == ["1 confirmed", "2 refused"])
        #expect(gone.last?.reason == "refused")
    }

    @Test(
        "a mutation acknowledged and dropped in one step, by a server that sends no lastMutationID, is confirmed; one its store dropped at launch is refused at once"
    )
    func sampledStatuses() {
        let client = ClientID()
        var tracker = MutationTracker<Note>()
        let only = PendingMutation(Note(text: "a"), id: MutationID(client: client, sequence: 7))
        _ = tracker.steps(to: status([only], containing: 0))
        #expect(tracker.steps(to: status([], containing: 0)).map(\.outcome) == ["confirmed"])
        let dropped = tracker.note([failure(MutationID(client: client, sequence: 3))])
        #expect(dropped.map(\.outcome) == ["refused"])
    }

    private func failure(_ id: MutationID) -> RefusedMutation<Note> {
        RefusedMutation(id: id, mutation: nil, error: ResourceFailure(TestRefusal(), kind: .unrecoverable))
    }

    private struct TestRefusal: Error, CustomStringConvertible {
        var description: String { "refused" }
    }

    struct Note: Mutation, Equatable {
        var text: String
        func apply(to value: inout String) { value = text }
    }

    private func status(_ mutations: [PendingMutation<Note>], containing last: UInt64) -> OptimisticStatus<Note> {
        var status = OptimisticStatus<Note>(value: nil, confirmed: nil, mutations: mutations, resource: ResourceStatus(value: nil))
        if last > 0 { status.confirmed = Versioned("x", version: Version(epoch: 1, counter: 9), lastMutationID: last) }
        return status
    }
}
