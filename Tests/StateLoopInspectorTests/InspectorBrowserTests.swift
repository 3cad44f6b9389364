import Foundation
import InspectorTestSupport
import Logging
import StateLoop
import StateLoopInspector
import StateLoopInspectorServer
import StateLoopInspectorWire
import StateLoopSync
import StateLoopWire
import Synchronization
import TestSupport
import Testing

/// The inspector's page in a real browser (Debian's chromium, headless): a live app's events on
/// the timeline, a selected event's diff and effects, a preview that reaches the app, and the
/// token checked. `STATELOOP_INSPECTOR_SCREENSHOT=path` keeps a picture of the page.
@MainActor
@Suite("inspector: in a browser", .serialized, .timeLimit(.minutes(5)))
struct InspectorBrowserTests {
    /// A search whose lookups wait for the test to let them answer: a lookup overtaken by a
    /// newer query answers into a cancelled effect, and its event is discarded as stale.
    struct Search: Codable, Sendable, Equatable {
        var name = ""
        var password = ""
        var query: String?
        var results: [String] = []
        /// How many lookups were asked for: kept out of the Codable form, as a journal would.
        var lookups = 0

        private enum CodingKeys: String, CodingKey {
            case name, password, query, results
        }

        enum Event: Codable, Sendable, Equatable {
            case typedName(String)
            case typedPassword(password: String)
            case search(String?)
            case found(String)
        }

        static func reduce(_ state: inout Search, _ event: Event) {
            switch event {
            case .typedName(let name): state.name = name
            case .typedPassword(let password): state.password = password
            case .search(let query):
                state.query = query
                state.lookups += 1
            case .found(let result): state.results.append(result)
            }
        }
    }

    @Test(
        "the page shows the timeline live under its Content-Security-Policy, a selected event's diff and effects, sends a preview the app shows, and refuses a page without the token"
    )
    func page() async throws {
        try await withPage { server, browser, logger in try await check(server: server, browser: browser, logger: logger) }
    }

    /// Runs `body` with an inspector on a free port and a headless browser, both gone after it
    /// (a missing browser is recorded as an issue, and `body` not run).
    private func withPage(_ body: (InspectorServer, HeadlessChromium, Logger) async throws -> Void) async throws {
        if let missing = HeadlessChromium.missing {
            Issue.record(Comment(rawValue: missing))
            return
        }
        var logger = Logger(label: "inspector.browser-test")
        logger.logLevel = .critical
        let server = try InspectorServer(configuration: .init(port: 0), logger: logger)
        try await server.start()
        do {
            try await HeadlessChromium.using { browser in try await body(server, browser, logger) }
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }

    @Test(
        "a version received again is a quiet repeat, and repeats that change nothing fold into one row with a count; only a version older than the one held is painted as outdated"
    )
    func repeatsAreNoTrouble() async throws {
        try await withPage { server, browser, logger in
            let (pushes, push) = AsyncStream.makeStream(of: PushMessage<String>.self)
            let resource = RemoteResource(
                sources: ResourceSources(pull: { Versioned("pulled", version: Version(epoch: 1, counter: 1)) }, push: pushes))
            let inspector = Inspector(app: "Notes")
            inspector.watch(resource, named: "notes")
            let monitor = inspector.monitor(named: "form", of: Search.self, Search.Event.self)
            let system = System(initialState: Search(), reduce: Search.reduce, feedbacks: [], monitor: monitor)
            monitor.attach(to: system)
            defer {
                system.stop()
                inspector.disconnect()
                resource.stop()
            }
            inspector.connect(to: try #require(server.appURL), logger: logger)
            push.yield(.value(Versioned("second", version: Version(epoch: 1, counter: 2))))
            for _ in 0..<3 { push.yield(.value(Versioned("second", version: Version(epoch: 1, counter: 2)))) }  // the same again
            push.yield(.value(Versioned("first", version: Version(epoch: 1, counter: 1))))  // older
            // The first changes the state; the two after it change nothing.
            for _ in 0..<3 { system.send(.typedName("ann")) }
            #expect(
                await eventually(within: .seconds(30)) {
                    inspector.session().records.filter { $0.kind == .versionDropped }.count == 4
                        && inspector.session().records.filter { $0.kind == .reduced }.count == 3
                },
                "\(inspector.session().records.map(\.kind))")
            try await browser.navigate(to: try #require(server.pageURL))
            #expect(try await browser.waitFor("document.querySelectorAll('#timeline .record.kind-versionDropped').length === 2"))
            // Three repeats on one row; the event repeated without change on one row too.
            let counts = try await browser.evaluate(
                "[...document.querySelectorAll('#timeline .record')].filter(e => e.querySelector('.tag.repeats')).map(e => e.querySelector('.summary-text').textContent + ' ' + e.querySelector('.tag.repeats').textContent).join(' | ')"
            )
            guard case .string(let folded) = counts else { throw HeadlessChromium.Failure(description: "\(counts)") }
            #expect(folded.contains("notes: version e1v2 again, nothing new ×3"), "\(folded)")
            #expect(folded.contains(#"typedName("ann") ×3"#), "\(folded)")
            let markers = try await browser.evaluate(
                "[...document.querySelectorAll('#timeline .record.kind-versionDropped .marker')].map(e => e.className + ':' + e.textContent).join(' | ')"
            )
            #expect(markers == .string("marker repeat:REPEAT | marker outdated:OUTDATED"), "\(markers)")
            let rows = try await browser.evaluate(
                "[...document.querySelectorAll('#timeline .record.kind-versionDropped')].map(e => e.className + ' ' + e.textContent).join(' | ')")
            guard case .string(let text) = rows else { throw HeadlessChromium.Failure(description: "\(rows)") }
            #expect(text.contains("version e1v2 again, nothing new") && text.contains("version e1v1 dropped (outdated)"), "\(text)")
            #expect(text.contains("record kind-versionDropped repeat"), "the repeat's row is muted: \(text)")
            let total = inspector.session().records.count
            let heading = try await browser.evaluate("document.querySelector('#timeline-count').textContent")
            guard case .string(let counted) = heading else { throw HeadlessChromium.Failure(description: "\(heading)") }
            #expect(counted.hasPrefix("\(total) records in "), "folded records are shown, not hidden: \(counted)")
            // Unfolded, every record has its row.
            _ = try await browser.evaluate("document.querySelector('#fold-repeats').click()")
            #expect(try await browser.waitFor("document.querySelectorAll('#timeline .record.kind-versionDropped').length === 4"))
            #expect(try await browser.evaluate("document.querySelectorAll('#timeline .tag.repeats').length") == .number(0))
        }
    }

    @Test(
        "an event skipped on the page: the later states recomputed by the app's reducer, those that differ marked on the timeline, the selected one's difference shown; the app's state untouched"
    )
    func skipFromPage() async throws {
        try await withPage { server, browser, logger in
            let inspector = Inspector(app: "Notes")
            let monitor = inspector.monitor(named: "form", of: Search.self, Search.Event.self)
            let system = System(initialState: Search(), reduce: Search.reduce, feedbacks: [], monitor: monitor)
            monitor.attach(to: system)
            defer {
                system.stop()
                inspector.disconnect()
            }
            for event: Search.Event in [.typedName("ann"), .found("milk"), .found("tea"), .typedName("bob")] { system.send(event) }
            inspector.connect(to: try #require(server.appURL), logger: logger)
            try await browser.navigate(to: try #require(server.pageURL))
            func row(_ text: String) -> String {
                "[...document.querySelectorAll('#timeline .record.kind-reduced')].find(e => e.textContent.includes('\(text)'))"
            }
            #expect(try await browser.waitFor("\(row(#"typedName(\"bob\")"#)) !== undefined"))
            _ = try await browser.evaluate("\(row(#"found(\"milk\")"#)).click()")
            #expect(try await browser.waitFor("!document.querySelector('#skip-button').disabled"))
            _ = try await browser.evaluate("document.querySelector('#skip-button').click()")
            #expect(
                try await browser.waitFor("document.querySelector('#skip-summary').textContent.startsWith('Without #')"),
                "the answer is summed up")
            let summary = try await browser.evaluate("document.querySelector('#skip-summary').textContent")
            guard case .string(let said) = summary else { throw HeadlessChromium.Failure(description: "\(summary)") }
            #expect(said.contains("2 later states of form recomputed, 2 differ"), "\(said)")
            // The two later rows differ (no "milk" in their results); the skipped row is marked.
            #expect(try await browser.waitFor("document.querySelectorAll('#timeline .tag.skip-differs').length === 2"))
            #expect(try await browser.evaluate("document.querySelectorAll('#timeline .tag.skipped').length") == .number(1))
            _ = try await browser.evaluate("\(row(#"typedName(\"bob\")"#)).click()")
            #expect(try await browser.waitFor("document.querySelector('#detail-diff .skip-heading')?.textContent.includes('recorded → recomputed')"))
            #expect(system.state.results == ["milk", "tea"], "the app's state untouched")
            _ = try await browser.evaluate("document.querySelector('#skip-clear').click()")
            #expect(try await browser.waitFor("document.querySelectorAll('#timeline .tag.skip-differs').length === 0"))
        }
    }

    @Test("an event edited on the page and sent reaches the live app, which reduces it and records it like any other")
    func dispatchFromPage() async throws {
        try await withPage { server, browser, logger in
            let inspector = Inspector(app: "Notes")
            let monitor = inspector.monitor(named: "form", of: Search.self, Search.Event.self)
            let system = System(initialState: Search(), reduce: Search.reduce, feedbacks: [], monitor: monitor)
            monitor.attach(to: system)
            monitor.acceptEvents(into: system)
            defer {
                system.stop()
                inspector.disconnect()
            }
            system.send(.typedName("ann"))
            inspector.connect(to: try #require(server.appURL), logger: logger)
            try await browser.navigate(to: try #require(server.pageURL))
            let row = "[...document.querySelectorAll('#timeline .record.kind-reduced')].find(e => e.textContent.includes('typedName(\"ann\")'))"
            #expect(try await browser.waitFor("\(row) !== undefined"))
            _ = try await browser.evaluate("\(row).click()")
            #expect(
                try await browser.waitFor(
                    "!document.querySelector('#dispatch-box').hidden && document.querySelector('#dispatch-text').value.includes('ann')"))
            // Where the app sent the event, beside it.
            #expect(
                try await browser.waitFor(
                    "document.querySelector('#detail-title').textContent.includes('from StateLoopInspectorTests/InspectorBrowserTests.swift:')"),
                "the sender's file and line")
            _ = try await browser.evaluate(
                """
                (() => {
                  document.querySelector('#dispatch-text').value = '{"typedName": {"_0": "zoe"}}';
                  document.querySelector('#dispatch-button').click();
                })()
                """)
            #expect(try await browser.waitFor("document.querySelector('#dispatch-note').textContent.startsWith('sent to form')"))
            #expect(await eventually(within: .seconds(10)) { system.state.name == "zoe" }, "the app reduced the event")
            #expect(
                try await browser.waitFor(
                    "[...document.querySelectorAll('#timeline .record.kind-reduced')].some(e => e.textContent.includes('typedName(\"zoe\")'))"),
                "the event's record on the timeline")
            // Not JSON: said on the page, nothing sent.
            _ = try await browser.evaluate(
                "document.querySelector('#dispatch-text').value = '{typedName'; document.querySelector('#dispatch-button').click()")
            #expect(try await browser.waitFor("document.querySelector('#dispatch-note').textContent.startsWith('not JSON')"))
            #expect(system.state.name == "zoe")
        }
    }

    @Test(
        "records of a client, a server and another client linked into one chain in the order things happened, whatever the apps' clocks: one started an hour 'earlier', and a push recorded after the status it brought"
    )
    func linksAcrossApps() async throws {
        try await withPage { server, browser, logger in
            // The phone's session times run an hour ahead of the others'; the inspector places
            // each app on its own clock from its hello.
            let phone = Inspector(app: "Phone", startedAgo: .seconds(3_600))
            let backend = Inspector(app: "Backend")
            let tablet = Inspector(app: "Tablet")
            /// A record of `kind` with `fields` (as the wire names them).
            func record(_ kind: InspectorRecord.Kind, _ system: String, _ fields: [String: JSONValue]) throws -> InspectorRecord {
                let common: [String: JSONValue] = [
                    "sequence": .number(0), "time": .number(0), "system": .string(system), "kind": .string(kind.rawValue),
                ]
                return try JSONDecoder().decode(InspectorRecord.self, from: JSONEncoder().encode(JSONValue.object(common.merging(fields) { $1 })))
            }
            let version = JSONValue.object(["epoch": .number(0), "counter": .number(7)])
            phone.keep(try record(.reduced, "phone", ["event": .object(["add": .object(["_0": .string("milk")])]), "source": .string("sent")]))
            for step in ["queued", "sent"] {
                phone.keep(try record(.mutation, "notes", ["resource": .string("notes"), "mutation": .string("p:1"), "outcome": .string(step)]))
            }
            backend.keep(
                try record(
                    .socket, "server", ["socket": .number(4), "key": .string("list/home"), "client": .string("t"), "outcome": .string("opened")]))
            backend.keep(
                try record(
                    .mutation, "server",
                    ["mutation": .string("p:1"), "outcome": .string("applied"), "httpStatus": .number(200), "version": .string("v7")]))
            backend.keep(
                try record(
                    .commit, "server",
                    ["mutation": .string("p:1"), "changes": .array([.object(["key": .string("list/home"), "version": .string("v7")])])]
                ))
            // The tablet's status is kept before the push that brought it: as an app whose clock
            // runs behind would have it.
            tablet.keep(
                try record(.resource, "list", ["resource": .string("list"), "client": .string("t"), "status": .object(["version": .string("v7")])]))
            tablet.keep(
                try record(
                    .reduced, "tablet",
                    [
                        "source": .string("effect"), "event": .object(["loaded": .object([:])]),
                        "state": .object(["list": .object(["confirmedVersion": version])]),
                    ]
                ))
            backend.keep(
                try record(
                    .push, "server",
                    [
                        "pushes": .array([
                            .object([
                                "key": .string("list/home"), "version": .string("v7"), "queued": .array([.number(4)]), "queuedCount": .number(1),
                            ])
                        ])
                    ]
                ))
            backend.keep(try record(.request, "server", ["route": .string("POST /list"), "httpStatus": .number(200), "mutation": .string("p:1")]))
            let url = try #require(server.appURL)
            for inspector in [phone, backend, tablet] { inspector.connect(to: url, logger: logger) }
            defer { for inspector in [phone, backend, tablet] { inspector.disconnect() } }
            #expect(await eventually(within: .seconds(30)) { [phone, backend, tablet].allSatisfy(\.isConnected) })

            // Each app placed on the inspector's clock from its hello: the phone's session began an
            // hour ago by its own account, which the inspector's clock agrees with.
            let page = TestPage(url: "ws://127.0.0.1:\(try #require(server.port))/page?token=\(server.configuration.token)")
            defer { page.close() }
            #expect(await eventually(within: .seconds(30)) { page.apps.count == 3 })
            let now = Date().timeIntervalSince1970
            let bases = Dictionary(
                page.apps.compactMap { app -> (String, Double)? in
                    guard case .string(let name)? = app["app"], case .number(let base)? = app["clockBase"] else { return nil }
                    return (name, base)
                }, uniquingKeysWith: { first, _ in first })
            #expect(abs((bases["Phone"] ?? 0) - (now - 3_600)) < 60, "\(bases)")
            #expect(abs((bases["Backend"] ?? 0) - now) < 60 && abs((bases["Tablet"] ?? 0) - now) < 60, "\(bases)")

            try await browser.navigate(to: try #require(server.pageURL))
            #expect(try await browser.waitFor("[...document.querySelectorAll('#apps li.app')].length === 3"))
            let phoneRow = "[...document.querySelectorAll('#apps li.app')].find(li => li.querySelector('.app-title').textContent === 'Phone')"
            _ = try await browser.evaluate("\(phoneRow).click()")
            #expect(try await browser.waitFor("document.querySelectorAll('#timeline .record').length === 3"))
            _ = try await browser.evaluate("document.querySelector('#timeline .record.kind-reduced').click()")
            #expect(try await browser.waitFor("document.querySelectorAll('#detail-links .link-row').length === 9"))
            let chain = try await browser.evaluate(
                "[...document.querySelectorAll('#detail-links .link-row')].map(e => [...e.classList].find(c => c.startsWith('stage-')) + ' ' + e.querySelector('.link-app').textContent).join(' | ')"
            )
            guard case .string(let text) = chain else { throw HeadlessChromium.Failure(description: "\(chain)") }
            let stages = text.components(separatedBy: " | ")
            // Records kept within a millisecond of each other may come in any order the causes
            // allow (each app's place on the inspector's clock is known to its hello's transit):
            // the causes are what is checked.
            let expected = [
                "stage-press Phone · phone", "stage-queued Phone · notes", "stage-sent Phone · notes", "stage-applied Backend · server",
                "stage-commit Backend · server", "stage-push Backend · server", "stage-received Tablet · list", "stage-shown Tablet · tablet",
            ]
            #expect(stages.filter { $0 != "stage-request Backend · server" } == expected, "\(stages)")
            let request = try #require(stages.firstIndex(of: "stage-request Backend · server"), "\(stages)")
            #expect(request > stages.firstIndex(of: "stage-sent Phone · notes") ?? .max, "\(stages)")
            let times = try await browser.evaluate(
                "[...document.querySelectorAll('#detail-links .link-time')].map(e => parseInt(e.textContent.slice(1)))")
            guard case .array(let numbers) = times else { throw HeadlessChromium.Failure(description: "\(times)") }
            let ms = numbers.compactMap { if case .number(let n) = $0 { n } else { nil } }
            #expect(ms == ms.sorted() && (ms.last ?? .infinity) < 60_000, "on one clock, forward, not an hour apart: \(ms)")
        }
    }

    private func check(server: InspectorServer, browser: HeadlessChromium, logger: Logger) async throws {
        let gates = Gates()
        let inspector = Inspector(app: "Search", redacting: ["password"])
        let monitor = inspector.monitor(named: "search", of: Search.self, Search.Event.self)
        let system = System(
            initialState: Search(),
            reduce: Search.reduce,
            feedbacks: [
                .react(query: \.query) { (query: String, send: Send<Search.Event>) in
                    await gates.wait(for: query)
                    await send(.found("\(query)!"))
                }
            ],
            monitor: monitor
        )
        monitor.attach(to: system)
        var shown: [String] = []
        let subscription = system.observe { shown.append($0.name) }
        defer { subscription.cancel() }
        inspector.connect(to: try #require(server.appURL), logger: logger)
        defer { inspector.disconnect() }

        system.send(.typedName("ann"))  // 2
        system.send(.typedPassword(password: "hunter2"))  // 3
        system.send(.search("ca"))  // 4, effect 1 starts (5)
        system.send(.search("cab"))  // 6, effect 1 cancelled (7), effect 2 starts (8)
        gates.open("ca")  // effect 1's answer: stale
        #expect(await eventually(within: .seconds(10)) { inspector.session().records.contains { $0.kind == .discarded } }, "no stale discard")
        gates.open("cab")
        #expect(await eventually(within: .seconds(10)) { system.state.results == ["cab!"] })
        let session = inspector.session()
        let overtaking = try #require(
            session.records.first { $0.kind == .reduced && $0.event == .object(["search": .object(["_0": .string("cab")])]) })

        try await browser.navigate(to: try #require(server.pageURL))
        let count = session.records.count
        #expect(
            try await browser.waitFor("document.querySelectorAll('#timeline .record').length >= \(count)"),
            "the timeline never held the \(count) records")
        #expect(try await browser.waitFor("document.querySelector('#status').textContent.includes('connected')"))
        #expect(
            try await browser.evaluate("document.querySelectorAll('#timeline .record.stale').length") == .number(1), "the stale discard is marked")
        #expect(try await browser.evaluate("document.body.innerText.includes('hunter2')") == .bool(false), "the password reached the page")
        // Events read as Swift writes them, not as their Codable JSON with `_0` labels.
        let rows = try await browser.evaluate(
            "[...document.querySelectorAll('#timeline .record.kind-reduced .summary-text, #timeline .record.kind-discarded .summary-text')].map(e => e.textContent).join(' | ')"
        )
        guard case .string(let events) = rows else { throw HeadlessChromium.Failure(description: "no event rows: \(rows)") }
        for label in [#"typedName("ann")"#, #"search("ca")"#, #"search("cab")"#, #"found("cab!")"#, "typedPassword(password: "] {
            #expect(events.contains(label), "\(label) not in \(events)")
        }
        #expect(!events.contains("_0") && !events.contains("{\""), "\(events)")
        // Events hidden and shown by name: the search events go, the others stay, then all come back.
        let searches = "[...document.querySelectorAll('#timeline .record .summary-text')].filter(e => e.textContent.startsWith('search(')).length"
        #expect(try await browser.evaluate(searches) == .number(2), "search(\"ca\") and search(\"cab\")")
        _ = try await browser.evaluate("document.querySelector('#event-names [data-event-name=\"search\"]').click()")
        #expect(try await browser.waitFor("\(searches) === 0"), "the search events are still shown")
        #expect(try await browser.evaluate("document.body.innerText.includes('found(\"cab!\")')") == .bool(true), "another event went too")
        _ = try await browser.evaluate("document.querySelector('#event-names-all').click()")
        #expect(try await browser.waitFor("\(searches) === 2"), "the search events did not come back")

        // All of the above ran under the page's Content-Security-Policy, which chromium enforces:
        // an inline script added now does not run, the page's own style applies.
        let policy = try await browser.evaluate("fetch(location.href, { cache: 'no-store' }).then(r => r.headers.get('content-security-policy'))")
        guard case .string(let header) = policy else { throw HeadlessChromium.Failure(description: "no Content-Security-Policy: \(policy)") }
        #expect(header.contains("script-src 'self'") && header.contains("connect-src 'self' ws://127.0.0.1:"), "\(header)")
        let inline =
            "(() => { const s = document.createElement('script'); s.textContent = 'window.inlineRan = true'; document.head.append(s); return window.inlineRan === true })()"
        #expect(try await browser.evaluate(inline) == .bool(false), "an inline script ran: no policy enforced")
        #expect(
            try await browser.evaluate("[...document.styleSheets].some(s => s.href && s.href.endsWith('/inspector.css') && s.cssRules.length > 0)")
                == .bool(true), "the style sheet did not load")

        // The overtaking search: its diff names the query, its effects the cancel and the start.
        _ = try await browser.evaluate("document.querySelector('#timeline .record[data-sequence=\"\(overtaking.sequence)\"]').click()")
        #expect(
            try await browser.waitFor("[...document.querySelectorAll('#detail-diff .change')].some(e => e.dataset.path === 'query')"),
            "the diff does not name the query")
        // The state as the system holds it: a field kept out of the Codable form shows and is compared.
        #expect(
            try await browser.waitFor("[...document.querySelectorAll('#detail-diff .change')].some(e => e.dataset.path === 'lookups')"),
            "the diff does not name the field left out of the Codable form")
        #expect(try await browser.waitFor("document.querySelector('#detail-state-title').textContent.includes('not journaled: lookups')"))
        // Effect 1 cancelled and effect 2 started by this state (effect 1's return, before the
        // next event, is listed too).
        let effects = try await browser.evaluate("[...document.querySelectorAll('#detail-effects .effect')].map(e => e.textContent).join(' | ')")
        guard case .string(let listed) = effects else { throw HeadlessChromium.Failure(description: "no effects listed: \(effects)") }
        #expect(listed.contains("#1") && listed.localizedCaseInsensitiveContains("cancel"), "\(listed)")
        #expect(listed.contains("#2") && listed.localizedCaseInsensitiveContains("start") && listed.contains("cab"), "\(listed)")
        #expect(try await browser.evaluate("document.querySelector('#detail-event').textContent.includes('cab')") == .bool(true))
        // The state is a tree: its keys copy their paths, its values copy as JSON.
        #expect(try await browser.waitFor("document.querySelector('#detail-state .tree-branch') !== null"), "the state is not a tree")
        _ = try await browser.evaluate(
            "window.copied = []; navigator.clipboard.writeText = (text) => { window.copied.push(text); return Promise.resolve() }; true")
        _ = try await browser.evaluate("document.querySelector('#detail-state [data-copy-path=\"query\"]').click()")
        _ = try await browser.evaluate(
            "[...document.querySelectorAll('#detail-state .tree-leaf')].find(e => e.textContent.startsWith('query')).querySelector('[data-copy-value]').click()"
        )
        #expect(try await browser.waitFor("window.copied.length === 2"), "nothing copied")
        #expect(try await browser.evaluate("window.copied.join(' | ')") == .string(#"query | "cab""#))
        #expect(try await browser.waitFor("document.querySelector('#notice-text').textContent === 'Copied the value.'"))

        // The slider moves through the rows: at its start, the first record is selected and
        // its state shown; at its end, the newest.
        #expect(try await browser.evaluate("document.querySelector('#time-slider').disabled") == .bool(false))
        let slide = { (position: String) in
            "(() => { const s = document.querySelector('#time-slider'); s.value = \(position); s.dispatchEvent(new Event('input')); return true })()"
        }
        _ = try await browser.evaluate(slide("0"))
        #expect(
            try await browser.waitFor("document.querySelector('#timeline .record.selected')?.dataset.sequence === '1'"),
            "the slider's start is not the first row")
        _ = try await browser.evaluate(slide("document.querySelector('#time-slider').max"))
        #expect(
            try await browser.waitFor(
                "(() => { const rows = [...document.querySelectorAll('#timeline .record')]; return rows.length > 0 && rows[rows.length - 1].classList.contains('selected') })()"
            ), "the slider's end is not the newest row")

        // Time travel: the state after "ann" previewed in the app, then live again.
        _ = try await browser.evaluate("document.querySelector('#timeline .record[data-sequence=\"2\"]').click()")
        _ = try await browser.evaluate("document.querySelector('#preview-button').click()")
        #expect(await eventually(within: .seconds(10)) { system.isPreviewing }, "the preview never reached the app")
        #expect(shown.last == "ann" && system.state.query == "cab", "the app shows the past state, keeps the live one")
        #expect(try await browser.waitFor("!document.querySelector('#preview-banner').hidden"), "no preview banner")
        if let path = ProcessInfo.processInfo.environment["STATELOOP_INSPECTOR_SCREENSHOT"] {
            try await browser.screenshot().write(to: URL(fileURLWithPath: path))
        }
        _ = try await browser.evaluate("document.querySelector('#live-button').click()")
        #expect(await eventually(within: .seconds(10)) { !system.isPreviewing }, "back to live never reached the app")

        // Records keep coming live.
        system.send(.typedName("bob"))
        let last = inspector.session().records.count
        #expect(try await browser.waitFor("document.querySelectorAll('#timeline .record').length >= \(last)"), "a new event never reached the page")

        // Without the token the page is refused, and holds nothing of the session.
        try await browser.navigate(to: "http://127.0.0.1:\(try #require(server.port))/")
        #expect(try await browser.evaluate("document.body.innerText.includes('token')") == .bool(true), "no refusal shown")
        #expect(try await browser.evaluate("document.querySelectorAll('#timeline .record').length") == .number(0))
        system.stop()
    }
}

/// Lets each lookup answer when the test opens its query's gate.
private final class Gates: Sendable {
    private let state = Mutex<(open: Set<String>, waiting: [String: [CheckedContinuation<Void, Never>]])>(([], [:]))

    func wait(for query: String) async {
        await withCheckedContinuation { continuation in
            let resume = state.withLock { state in
                if state.open.contains(query) { return true }
                state.waiting[query, default: []].append(continuation)
                return false
            }
            if resume { continuation.resume() }
        }
    }

    func open(_ query: String) {
        let waiting = state.withLock { state in
            state.open.insert(query)
            return state.waiting.removeValue(forKey: query) ?? []
        }
        for continuation in waiting { continuation.resume() }
    }
}
