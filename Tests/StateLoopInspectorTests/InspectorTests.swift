import Foundation
import StateLoop
import StateLoopInspector
import StateLoopInspectorWire
import StateLoopTesting
import Testing

/// A small app for the inspector: a sign-in form with a secret, and a lookup effect.
struct Form: Codable, Sendable, Equatable {
    var name = ""
    var password = ""
    var lookup: String?
    var found: [String] = []

    enum Event: Codable, Sendable, Equatable {
        case typedName(String)
        case typedPassword(password: String)
        case look(String?)
        case found(String)
    }

    static func reduce(_ state: inout Form, _ event: Event) {
        switch event {
        case .typedName(let name): state.name = name
        case .typedPassword(let password): state.password = password
        case .look(let query): state.lookup = query
        case .found(let result): state.found.append(result)
        }
    }
}

@MainActor
@Suite("inspector: recording")
struct InspectorTests {
    func makeSystem(_ inspector: Inspector) -> (System<Form, Form.Event>, InspectorMonitor<Form, Form.Event>) {
        let monitor = inspector.monitor(named: "form", of: Form.self, Form.Event.self)
        let system = System(
            initialState: Form(),
            reduce: Form.reduce,
            feedbacks: [
                .react(query: \.lookup) { (query: String, _: Send<Form.Event>) in
                    await withUnsafeContinuation { (_: UnsafeContinuation<Void, Never>) in }
                }
            ],
            monitor: monitor
        )
        monitor.attach(to: system)
        return (system, monitor)
    }

    @Test("every event is recorded with the state it produced, and effects with their requests, in order")
    func recordsInOrder() {
        let inspector = Inspector(app: "Forms")
        let (system, _) = makeSystem(inspector)
        system.send(.typedName("ann"))
        system.send(.look("par"))
        system.send(.look("pari"))
        let records = inspector.session().records
        #expect(records.map(\.kind) == [.attached, .reduced, .reduced, .effectStarted, .reduced, .effectCancelled, .effectStarted])
        #expect(records.map(\.sequence) == Array(1...7))
        #expect(records[1].event == .object(["typedName": .object(["_0": .string("ann")])]))
        #expect(records[1].source == "sent")
        #expect(records[3].request == "par")
        #expect(records[4].state?.differences(from: records[2].state!) == ["lookup: \"par\" → \"pari\""])
        system.stop()
    }

    @Test(
        "a sent event is recorded with where the app sent it, file and line, also when it was queued behind another (an observer's) or journaled; an effect's event has none"
    )
    func sentFrom() throws {
        let inspector = Inspector(app: "Forms")
        let (system, _) = makeSystem(inspector)
        let line = #line + 1
        system.send(.typedName("ann"))
        // Sent from an observer while the system is notifying: queued, then reduced.
        let queuedLine = #line + 1
        let subscription = system.observe { state in if state.name == "ann" { system.send(.typedName("bob")) } }
        defer { subscription.cancel() }
        let records = inspector.session().records.filter { $0.kind == .reduced }
        #expect(records.first?.location == "StateLoopInspectorTests/InspectorTests.swift:\(line)", "\(records.map(\.location))")
        #expect(records.last?.location == "StateLoopInspectorTests/InspectorTests.swift:\(queuedLine)", "\(records.map(\.location))")
        #expect(records.count == 2)
        system.stop()
    }

    @Test("a field marked secret never leaves the app: redacted in events and states, at any depth")
    func secretsRedacted() throws {
        let inspector = Inspector(app: "Forms", redacting: ["password"])
        let (system, _) = makeSystem(inspector)
        system.send(.typedPassword(password: "hunter2"))
        let file = try JSONEncoder().encode(inspector.session())
        #expect(!String(decoding: file, as: UTF8.self).contains("hunter2"), "the password reached the session")
        let record = inspector.session().records.last!
        #expect(record.event == .object(["typedPassword": .object(["password": .string(Redaction.placeholder)])]))
        guard case .object(let state) = record.state else {
            Issue.record("no state recorded: \(record)")
            return
        }
        #expect(state["password"] == .string(Redaction.placeholder))
        system.stop()
    }

    @Test("the state as the system holds it: the fields its Codable form leaves out are recorded beside it, redacted; a fully Codable state has none")
    func unjournaledFields() throws {
        struct Typing: Codable, Sendable, Equatable {
            var saved = ""
            var draft = ""  // kept out of the journal
            var pin = ""  // kept out, and secret
            private enum CodingKeys: String, CodingKey { case saved }
            static func reduce(_ state: inout Typing, _ text: String) {
                state.draft = text
                state.pin = "1234"
            }
        }
        let inspector = Inspector(app: "Typing", redacting: ["pin"])
        let monitor = inspector.monitor(named: "typing", of: Typing.self, String.self)
        let system = System(initialState: Typing(), reduce: Typing.reduce, monitor: monitor)
        monitor.attach(to: system)
        system.send("sai")
        let record = try #require(inspector.session().records.last)
        #expect(record.state == .object(["saved": .string("")]))
        #expect(record.unjournaled == .object(["draft": .string("sai"), "pin": .string(Redaction.placeholder)]))
        system.stop()

        let (form, _) = makeSystem(inspector)
        form.send(.typedName("ann"))
        #expect(inspector.session().records.last?.unjournaled == nil, "every field of Form is in its Codable form")
        form.stop()
    }

    @Test("an effect's request is shown field by field, with the secret fields redacted, Codable or not")
    func secretInRequest() throws {
        struct SignIn: Hashable, Sendable {
            var user: String
            var password: String
            var attempts: [Int]
        }
        struct Session: Codable, Sendable {
            var signIn: String?
        }
        let inspector = Inspector(app: "Sign-in", redacting: ["password"])
        let monitor = inspector.monitor(named: "sign-in", of: Session.self, String.self)
        let system = System(
            initialState: Session(),
            reduce: { (state: inout Session, event: String) in state.signIn = event },
            feedbacks: [
                .react(query: { (state: Session) in state.signIn.map { SignIn(user: $0, password: "hunter2", attempts: [1, 2]) } }) {
                    (_: SignIn, _: Send<String>) in
                    // Until cancelled: the system stops at the end of the test.
                    try? await Task.sleep(for: .seconds(3_600))
                }
            ],
            monitor: monitor
        )
        monitor.attach(to: system)
        system.send("ann")
        let request = try #require(inspector.session().records.first { $0.kind == .effectStarted }?.request)
        #expect(!request.contains("hunter2"), "the password reached the session: \(request)")
        #expect(request.contains("SignIn") && request.contains("\"user\": \"ann\"") && request.contains("[1, 2]"), "\(request)")
        system.stop()
    }

    @Test("a full buffer drops its oldest records and says how many, never holding the app up")
    func boundedBuffer() {
        let inspector = Inspector(app: "Forms", capacity: 10)
        let (system, _) = makeSystem(inspector)
        for index in 0..<100 {
            system.send(.typedName("n\(index)"))
        }
        let records = inspector.session().records
        #expect(records.count == 11)
        #expect(records.first?.kind == .dropped)
        #expect(records.first?.dropped == 91)
        #expect(inspector.droppedRecords == 91)
        #expect(records.last?.sequence == 101)
        system.stop()
    }

    @Test("a recorded session replays through the reducer: every state matches")
    func replayMatches() throws {
        let inspector = Inspector(app: "Forms", redacting: ["password"])
        let (system, _) = makeSystem(inspector)
        system.send(.typedName("ann"))
        system.send(.typedPassword(password: "hunter2"))
        system.send(.look("gare"))
        system.send(.found("Gare du Nord"))
        let session = try JSONDecoder().decode(InspectorSession.self, from: JSONEncoder().encode(inspector.session()))
        let replayed = try SessionReplay(session).check(system: "form", reduce: Form.reduce)
        #expect(replayed == 4)
        system.stop()
    }

    @Test("a reducer that changed fails the replay at the first different state, with the path that differs")
    func replayMismatch() throws {
        let inspector = Inspector(app: "Forms")
        let (system, _) = makeSystem(inspector)
        system.send(.typedName("ann"))
        system.send(.found("Gare du Nord"))
        system.send(.found("Gare de Lyon"))
        let changed: (inout Form, Form.Event) -> Void = { state, event in
            Form.reduce(&state, event)
            if case .found = event, state.found.count > 1 { state.found.removeFirst() }
        }
        #expect {
            try SessionReplay(inspector.session()).check(system: "form", reduce: changed)
        } throws: { error in
            guard let mismatch = error as? SessionReplay.Mismatch else { return false }
            return mismatch.sequence == 4 && mismatch.differences == [#"found: ["Gare du Nord", "Gare de Lyon"] → ["Gare de Lyon"]"#]
        }
        system.stop()
    }

    @Test("a full buffer's session replays from the oldest state it kept; a gap after that state refuses the replay")
    func replayAroundGaps() throws {
        let inspector = Inspector(app: "Forms", capacity: 5)
        let (system, _) = makeSystem(inspector)
        for index in 0..<20 {
            system.send(.typedName("n\(index)"))
        }
        var session = inspector.session()
        #expect(session.records.first?.kind == .dropped)
        #expect(try SessionReplay(session).check(system: "form", reduce: Form.reduce) == 4, "the first kept state is the start")
        var gap = InspectorRecord(sequence: session.records[3].sequence, time: 0, system: "another", kind: .dropped)
        gap.dropped = 7
        session.records.insert(gap, at: 3)
        #expect(throws: SessionReplay.Unreplayable.self) {
            try SessionReplay(session).check(system: "form", reduce: Form.reduce)
        }
        system.stop()
    }

    @Test("a replay of a system the session does not hold says which systems it holds")
    func replayUnknownSystem() {
        let inspector = Inspector(app: "Forms")
        let (system, _) = makeSystem(inspector)
        #expect(throws: SessionReplay.Unreplayable.self) {
            try SessionReplay(inspector.session()).check(system: "cart", reduce: Form.reduce)
        }
        system.stop()
    }
}
