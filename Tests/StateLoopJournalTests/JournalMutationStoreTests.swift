import Foundation
import StateLoop
import StateLoopJournal
import StateLoopSync
import Synchronization
import TestSupport
import Testing

/// Adds a name to a list.
struct AddName: Mutation, Equatable {
    let name: String

    func apply(to names: inout [String]) {
        names.append(name)
    }
}

/// A server that applies each mutation id once, and can be offline.
final class NamesServer: Sendable {
    private struct State {
        var names: [String] = ["ann"]
        var counter: UInt64 = 1
        var applied: [MutationID: UInt64] = [:]
        var received: [MutationID] = []
        var online = false
    }

    private let state = Mutex(State())

    var received: [MutationID] { state.withLock { $0.received } }
    var names: [String] { state.withLock { $0.names } }

    func setOnline(_ online: Bool) {
        state.withLock { $0.online = online }
    }

    func pull() throws -> Versioned<[String]> {
        try state.withLock { state in
            guard state.online else { throw HTTPStatusError(status: 503) }
            return Versioned(state.names, version: Version(counter: state.counter))
        }
    }

    func send(_ mutation: AddName, _ id: MutationID, evenOffline: Bool = false) throws -> Version {
        try state.withLock { state in
            guard state.online || evenOffline else { throw HTTPStatusError(status: 503) }
            state.received.append(id)
            if let counter = state.applied[id] { return Version(counter: counter) }
            state.names.append(mutation.name)
            state.counter += 1
            state.applied[id] = state.counter
            return Version(counter: state.counter)
        }
    }
}

@Suite("JournalMutationStore", .timeLimit(.minutes(4)))
struct JournalMutationStoreTests {
    @Test("the queue and the confirmed value survive a relaunch, in order")
    func roundTrip() async throws {
        let folder = TemporaryFolder()
        let queue = [PendingMutation(AddName(name: "bob")), PendingMutation(AddName(name: "cid"))]
        do {
            let journal = try Journal<Tally, TallyEvent>(at: folder.journal)
            let store = journal.mutationStore(named: "names", for: AddName.self)
            try await store.save(queue)
            try await store.saveConfirmed(Versioned(["ann"], version: Version(counter: 1)))
            try await journal.mutationStore(named: "other", for: AddName.self).save([])
            journal.close()
        }
        let journal = try Journal<Tally, TallyEvent>(at: folder.journal)
        let store = journal.mutationStore(named: "names", for: AddName.self)
        #expect(try await store.load().map(\.id) == queue.map(\.id))
        #expect(try await store.load().map(\.mutation) == queue.map(\.mutation))
        #expect(try await store.loadConfirmed() == Versioned(["ann"], version: Version(counter: 1)))
    }

    @Test("offline relaunch shows the optimistic value; online, each mutation is sent in order and applied once")
    func offlineRelaunch() async throws {
        let folder = TemporaryFolder()
        let server = NamesServer()
        server.setOnline(true)
        var policy = ResourcePolicy()
        policy.pollInterval = nil
        policy.maxRetries = 0

        // First launch: the list loads; two names are added. The server applies the first,
        // but its answer never comes back (the network goes), and the app is killed.
        var ids: [MutationID] = []
        let lostAnswers = Gate()
        do {
            let journal = try Journal<Tally, TallyEvent>(at: folder.journal)
            let names = RemoteResource(sources: ResourceSources(pull: { try server.pull() }), policy: policy)
            let resource = OptimisticResource(
                resource: names,
                store: journal.mutationStore(named: "names", for: AddName.self),
                policy: policy
            ) { mutation, id in
                let version = try server.send(mutation, id, evenOffline: true)
                await lostAnswers.wait()
                return version
            }
            #expect(await firstElement(of: resource.updates(), where: { $0.value == ["ann"] }) != nil, "the list never loaded")
            server.setOnline(false)
            ids.append(resource.mutate(AddName(name: "bob")))
            ids.append(resource.mutate(AddName(name: "cid")))
            #expect(await firstElement(of: resource.updates(), where: { $0.value == ["ann", "bob", "cid"] }) != nil)
            // Saved, the first one as sent, before the app is killed.
            let store = journal.mutationStore(named: "names", for: AddName.self)
            #expect(
                await eventually {
                    (try? await store.load().map { "\($0.id) \($0.status)" }) == ["\(ids[0]) sent", "\(ids[1]) pending"]
                }
            )
            #expect(server.received == [ids[0]])
            journal.close()
        }

        // Relaunch, still offline: the optimistic list is back without the server.
        let journal = try Journal<Tally, TallyEvent>(at: folder.journal)
        let names = RemoteResource(sources: ResourceSources(pull: { try server.pull() }), policy: policy)
        let gate = Gate()
        let resource = OptimisticResource(
            resource: names,
            store: journal.mutationStore(named: "names", for: AddName.self),
            policy: policy
        ) { mutation, id in
            await gate.wait()
            return try server.send(mutation, id)
        }
        let shown = await firstElement(of: resource.updates(), where: { $0.value == ["ann", "bob", "cid"] })
        #expect(shown != nil, "the optimistic list did not come back offline")
        #expect(server.received == [ids[0]])

        // Online: sent again in order with the same ids; the server applies each once. Whether
        // the resource's first pull lands before, between or after the two answers depends on
        // scheduling, so only the end of the story is waited for: the server's list, nothing
        // pending.
        server.setOnline(true)
        await gate.open()
        #expect(await eventually { server.received.count == 3 }, "sent: \(server.received)")
        // No push in this test: a pull brings the server's list, which contains both.
        names.refresh()
        let settled = await firstElement(of: resource.updates()) { $0.value == ["ann", "bob", "cid"] && $0.mutations.isEmpty }
        #expect(settled != nil, "the mutations never settled")
        #expect(server.received == [ids[0], ids[0], ids[1]])
        #expect(server.names == ["ann", "bob", "cid"])
    }
}

/// Holds sends until opened: the relaunched app is offline until the test says otherwise.
actor Gate {
    private var isOpen = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    func wait() async {
        guard !isOpen else { return }
        await withCheckedContinuation { waiters.append($0) }
    }

    func open() {
        isOpen = true
        for waiter in waiters { waiter.resume() }
        waiters = []
    }
}
