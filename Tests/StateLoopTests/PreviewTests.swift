import StateLoop
import Testing

/// A preview shows a past state to observers and UI feedbacks while the live system goes on:
/// the inspector's time travel.
@MainActor
@Suite("preview of a past state")
struct PreviewTests {
    @Test("observers and binds see the preview and no live state until it ends; reducing and effects go on with the live state")
    func previewThenLive() async {
        let rendered = Shared<[Int]>([])
        let effects = Shared<[Int]>([])
        let system = System(
            initialState: Counter(),
            reduce: Counter.reduce,
            feedbacks: [
                .bind { state in rendered.update { $0.append(state.count) } },
                .react(query: \.request) { (request: Int, _: Send<Counter.Event>) in
                    effects.update { $0.append(request) }
                    await waitForCancellation()
                },
            ]
        )
        var observed: [Int] = []
        let subscription = system.observe { observed.append($0.count) }
        system.send(.increment)
        system.send(.increment)
        system.showPreview(Counter(count: 1))
        #expect(system.isPreviewing)
        system.send(.increment)
        system.send(.ask(5))
        #expect(system.state.count == 3, "the live state goes on")
        #expect(observed == [0, 1, 2, 1])
        #expect(rendered.value == [0, 1, 2, 1])
        #expect(await yieldUntil { effects.value == [5] }, "the effect of a live state starts during a preview: \(effects.value)")
        system.showPreview(nil)
        #expect(!system.isPreviewing)
        #expect(observed == [0, 1, 2, 1, 3], "leaving the preview shows the live state at once")
        #expect(rendered.value == [0, 1, 2, 1, 3])
        system.send(.increment)
        #expect(observed.last == 4)
        subscription.cancel()
        system.stop()
    }

    @Test("an observer or state stream that starts during a preview begins with the preview")
    func lateObserver() async {
        let system = System(initialState: Counter(), reduce: Counter.reduce)
        system.send(.add(10))
        system.showPreview(Counter(count: 4))
        var observed: [Int] = []
        let subscription = system.observe { observed.append($0.count) }
        var states = system.states.makeAsyncIterator()
        #expect(await states.next()?.count == 4)
        #expect(observed == [4])
        subscription.cancel()
        system.stop()
    }

    @Test("an event an observer sends when shown the preview is reduced after it, not inside it")
    func eventFromObserverDuringPreview() async {
        let system = System(initialState: Counter(), reduce: Counter.reduce)
        var seen: [Int] = []
        let subscription = system.observe { state in
            seen.append(state.count)
            if state.count == 7 { system.send(.increment) }
        }
        system.showPreview(Counter(count: 7))
        #expect(system.state.count == 1)
        #expect(seen == [0, 7], "the observer is not shown live states during the preview")
        subscription.cancel()
        system.stop()
    }

    @Test("the previewer handle works from another task, and answers false once the system is stopped or gone")
    func previewerHandle() async {
        var system: System<Counter, Counter.Event>? = System(initialState: Counter(), reduce: Counter.reduce)
        var observed: [Int] = []
        let subscription = system?.observe { observed.append($0.count) }
        let previewer = system!.previewer
        let shown = await Task.detached { await previewer.show(Counter(count: 9)) }.value
        #expect(shown)
        #expect(observed == [0, 9])
        system?.stop()
        #expect(await Task.detached { await previewer.show(nil) }.value == false)
        subscription?.cancel()
        system = nil
        #expect(await Task.detached { await previewer.show(nil) }.value == false)
    }
}
