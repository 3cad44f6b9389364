import StateLoop
import StateLoopTesting
import Testing

/// An upload row: the child feature, unaware of any parent.
struct Upload: Identifiable, Equatable, Sendable {
    let id: Int
    var seconds: Int
    var isUploading = true
    var isDone = false

    enum Event: Equatable, Sendable { case finished, cancelled }

    static func reduce(_ state: inout Upload, _ event: Event) {
        switch event {
        case .finished:
            state.isUploading = false
            state.isDone = true
        case .cancelled: state.isUploading = false
        }
    }

    static func feedbacks(clock: TestClock, cancellations: Shared<[Int]>) -> [Feedback<Upload, Event>] {
        [
            .react(query: { $0.isUploading ? $0.seconds : nil }) { seconds, send in
                do {
                    try await clock.sleep(for: .seconds(seconds))
                    await send(.finished)
                } catch {
                    cancellations.update { $0.append(seconds) }
                }
            }
        ]
    }
}

/// The parent: a list of uploads, and an optional one shown in detail.
struct Uploads: Equatable, Sendable {
    var rows: [Upload] = []
    var detail: Upload?

    enum Event: Equatable, Sendable {
        case add(Upload)
        case remove(Int)
        case row(Int, Upload.Event)
        case showDetail(Upload?)
        case detail(Upload.Event)
    }

    static func reduce(_ state: inout Uploads, _ event: Event) {
        switch event {
        case .add(let row): state.rows.append(row)
        case .remove(let id): state.rows.removeAll { $0.id == id }
        case .row(let id, let event):
            if let index = state.rows.firstIndex(where: { $0.id == id }) {
                Upload.reduce(&state.rows[index], event)
            }
        case .showDetail(let upload): state.detail = upload
        case .detail(let event):
            if state.detail != nil { Upload.reduce(&state.detail!, event) }
        }
    }
}

@Suite("composition")
struct CompositionTests {
    @Test("each row runs its own effect; a removed row's effect is cancelled and never delivers")
    func rowsWithEffects() async {
        let clock = TestClock()
        let cancellations = Shared<[Int]>([])
        let store = await TestSystem(
            initialState: Uploads(),
            reduce: Uploads.reduce,
            feedbacks: [
                .forEach(\.rows, event: Uploads.Event.row, feedbacks: Upload.feedbacks(clock: clock, cancellations: cancellations))
            ],
            clock: clock
        )
        let first = Upload(id: 1, seconds: 1)
        let second = Upload(id: 2, seconds: 2)
        let third = Upload(id: 3, seconds: 3)
        await store.send(.add(first)) { $0.rows = [first] }
        await store.send(.add(second)) { $0.rows = [first, second] }
        await store.send(.add(third)) { $0.rows = [first, second, third] }
        #expect(clock.sleeperCount == 3)

        await store.send(.remove(2)) { $0.rows = [first, third] }
        #expect(cancellations.value == [2])

        await clock.advance(by: .seconds(5))
        await store.receive(.row(1, .finished)) {
            $0.rows[0].isUploading = false
            $0.rows[0].isDone = true
        }
        await store.receive(.row(3, .finished)) {
            $0.rows[1].isUploading = false
            $0.rows[1].isDone = true
        }
        await store.finish()
    }

    @Test("an embedded child's effects run while its state exists and stop when it goes away")
    func optionalChild() async {
        let clock = TestClock()
        let cancellations = Shared<[Int]>([])
        let store = await TestSystem(
            initialState: Uploads(),
            reduce: Uploads.reduce,
            feedbacks: [
                .scope(state: \.detail, event: Uploads.Event.detail, feedbacks: Upload.feedbacks(clock: clock, cancellations: cancellations))
            ],
            clock: clock
        )
        let upload = Upload(id: 9, seconds: 4)
        await store.send(.showDetail(upload)) { $0.detail = upload }
        await store.send(.showDetail(nil)) { $0.detail = nil }
        #expect(cancellations.value == [4])
        await store.send(.showDetail(upload)) { $0.detail = upload }
        await clock.advance(by: .seconds(4))
        await store.receive(.detail(.finished)) {
            $0.detail?.isUploading = false
            $0.detail?.isDone = true
        }
        await store.finish()
    }

    @Test("the same child feedbacks drive the child on its own")
    func childAlone() async {
        let clock = TestClock()
        let store = await TestSystem(
            initialState: Upload(id: 1, seconds: 2),
            reduce: Upload.reduce,
            feedbacks: Upload.feedbacks(clock: clock, cancellations: Shared([])),
            clock: clock
        )
        await clock.advance(by: .seconds(2))
        await store.receive(.finished) {
            $0.isUploading = false
            $0.isDone = true
        }
        await store.finish()
    }

    @MainActor
    @Test("stopping the parent cancels every row's effect")
    func stopCancelsRows() async {
        let clock = TestClock()
        let cancellations = Shared<[Int]>([])
        let system = System(
            initialState: Uploads(rows: [Upload(id: 1, seconds: 1), Upload(id: 2, seconds: 2)]),
            reduce: Uploads.reduce,
            feedbacks: [.forEach(\.rows, event: Uploads.Event.row, feedbacks: Upload.feedbacks(clock: clock, cancellations: cancellations))]
        )
        #expect(await yieldUntil { clock.sleeperCount == 2 })
        system.stop()
        #expect(await yieldUntil { cancellations.value.count == 2 })
        #expect(await yieldUntil { system.runningTaskCount == 0 })
    }
}
