import Foundation
import ServerTestApp
import StateLoopServer
import StateLoopWire
import Testing

@Suite("Sync server: mutations", .timeLimit(.minutes(5)))
struct MutationTests {
    typealias NewNote = Notes.NewNote

    @Test("the same Mutation-ID sent 50 times at once runs once; every answer is the first one")
    func sameIDAtOnce() async throws {
        try await withNotesServer { server, client in
            let answers = try await withThrowingTaskGroup(of: (Int, Data).self) { group in
                for _ in 0..<50 {
                    group.addTask { try await client.mutate("me/notes", as: "ann", NewNote(text: "hello"), id: "c1:1") }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(Set(answers.map(\.0)) == [200])
            #expect(Set(answers.map(\.1)).count == 1)
            let receipt = try JSONDecoder().decode(MutationReceipt.self, from: answers[0].1)
            #expect(receipt.version.counter == 1)
            let (status, body) = try await client.send("GET", "me/notes", as: "ann", clientID: "c1")
            #expect(status == 200)
            let value = try JSONDecoder().decode(Versioned<[String]>.self, from: body)
            #expect(value == Versioned(["hello"], version: receipt.version, lastMutationID: 1))
        }
    }

    @Test("an id reused for another body or route is refused (409), and nothing runs")
    func idReused() async throws {
        try await withNotesServer { _, client in
            _ = try await client.mutate("me/notes", as: "ann", NewNote(text: "one"), id: "c1:1")
            let otherBody = try await client.mutate("me/notes", as: "ann", NewNote(text: "two"), id: "c1:1")
            #expect(otherBody.status == 409)
            #expect(TestClient.errorCode(otherBody.body) == "mutationIDReused")
            let otherRoute = try await client.mutate("board", as: "ann", Notes.BoardChange(add: 1), id: "c1:1")
            #expect(otherRoute.status == 409)
            let notes = try await client.send("GET", "me/notes", as: "ann")
            #expect(try JSONDecoder().decode(Versioned<[String]>.self, from: notes.body).value == ["one"])
            // Another principal's id space is its own.
            let bob = try await client.mutate("me/notes", as: "bob", NewNote(text: "two"), id: "c1:1")
            #expect(bob.status == 200)
        }
    }

    @Test("a refusal is remembered too: a retry gets it again, and the client's number moves on")
    func refusalRemembered() async throws {
        try await withNotesServer { _, client in
            let first = try await client.mutate("me/notes", as: "rita", NewNote(text: ""), id: "c2:1")
            let retry = try await client.mutate("me/notes", as: "rita", NewNote(text: ""), id: "c2:1")
            #expect(first.status == 409 && TestClient.errorCode(first.body) == "emptyNote")
            #expect(retry.status == first.status && retry.body == first.body)
            #expect(Notes.runs.withLock { $0["rita"] } == 1)
            // No value was written, so the GET is a 404, but the next mutation follows on.
            let next = try await client.mutate("me/notes", as: "rita", NewNote(text: "x"), id: "c2:2")
            #expect(next.status == 200)
            let read = try await client.send("GET", "me/notes", as: "rita", clientID: "c2")
            #expect(try JSONDecoder().decode(Versioned<[String]>.self, from: read.body).lastMutationID == 2)
        }
    }

    @Test("an id older than the client's last one, whose answer was forgotten, is refused, never run again")
    func olderIDNotRunAgain() async throws {
        try await withNotesServer { _, client in
            _ = try await client.mutate("me/notes", as: "ann", NewNote(text: "a"), id: "c3:1")
            _ = try await client.mutate("me/notes", as: "ann", NewNote(text: "b"), id: "c3:2")
            let stale = try await client.mutate("me/notes", as: "ann", NewNote(text: "a"), id: "c3:1")
            #expect(stale.status == 409)
            #expect(TestClient.errorCode(stale.body) == "mutationAlreadyProcessed")
            // The newest answer is still remembered.
            let repeated = try await client.mutate("me/notes", as: "ann", NewNote(text: "b"), id: "c3:2")
            #expect(repeated.status == 200)
            let notes = try await client.send("GET", "me/notes", as: "ann")
            #expect(try JSONDecoder().decode(Versioned<[String]>.self, from: notes.body).value == ["a", "b"])
        }
    }

    @Test("a retry whose body has its keys in another order is a retry; the answer is remembered before any check")
    func retryRecognized() async throws {
        try await withNotesServer { _, client in
            let first = try await client.send("POST", "me/notes", as: "hal", body: Data(#"{"text":"a","tag":1}"#.utf8), mutationID: "c6:1")
            #expect(first.status == 200)
            let reordered = try await client.send("POST", "me/notes", as: "hal", body: Data(#"{"tag":1,"text":"a"}"#.utf8), mutationID: "c6:1")
            #expect(reordered.status == 200 && reordered.body == first.body)
            // Access taken away after the answer was lost: the retry still gets the answer it
            // missed, not a 404 that would roll back an applied mutation.
            Notes.banned.withLock { _ = $0.insert("hal") }
            defer { Notes.banned.withLock { _ = $0.remove("hal") } }
            let afterBan = try await client.send("POST", "me/notes", as: "hal", body: Data(#"{"text":"a","tag":1}"#.utf8), mutationID: "c6:1")
            #expect(afterBan.status == 200 && afterBan.body == first.body)
            let newOne = try await client.mutate("me/notes", as: "hal", NewNote(text: "b"), id: "c6:2")
            #expect(newOne.status == 404)
            #expect(Notes.runs.withLock { $0["hal"] } == 1)
        }
    }

    @Test("a handler that throws something other than a refusal: a remembered 422, never an endless 503")
    func handlerBug() async throws {
        try await withNotesServer { _, client in
            let first = try await client.mutate("me/broken", as: "ann", NewNote(text: "a"), id: "c8:1")
            #expect(first.status == 422)
            #expect(TestClient.errorCode(first.body) == "handlerFailed")
            let retry = try await client.mutate("me/broken", as: "ann", NewNote(text: "a"), id: "c8:1")
            #expect(retry.status == 422 && retry.body == first.body)
            #expect(try await client.mutate("me/notes", as: "ann", NewNote(text: "a"), id: "c8:2").status == 200)
        }
    }

    @Test("a refusal's status is one clients take as final, whatever the handler asked for")
    func refusalStatus() {
        #expect(MutationRefusal("a", "b").status == 409)
        #expect(MutationRefusal("a", "b", status: 422).status == 422)
        for status in [200, 401, 403, 408, 429, 500, 503, 1_000, -1] {
            #expect(MutationRefusal("a", "b", status: status).status == 409, "\(status)")
        }
    }

    @Test("a commit that fails remembers no answer: the retry runs the mutation, once")
    func failedCommitRemembersNothing() async throws {
        let store = FlakyStore(try SQLiteStore())
        try await withNotesServer(store: store) { _, client in
            store.failNextCommit()
            let failed = try await client.mutate("me/notes", as: "ann", NewNote(text: "a"), id: "c4:1")
            #expect(failed.status == 503)
            #expect(TestClient.errorCode(failed.body) == "unavailable")
            #expect(try await client.send("GET", "me/notes", as: "ann").status == 404)
            let retry = try await client.mutate("me/notes", as: "ann", NewNote(text: "a"), id: "c4:1")
            #expect(retry.status == 200)
            let again = try await client.mutate("me/notes", as: "ann", NewNote(text: "a"), id: "c4:1")
            #expect(again.body == retry.body)
            let notes = try await client.send("GET", "me/notes", as: "ann")
            #expect(try JSONDecoder().decode(Versioned<[String]>.self, from: notes.body).value == ["a"])
        }
    }

    @Test("bad input gets a clear JSON error and changes nothing")
    func badInput() async throws {
        try await withNotesServer(configuration: SyncServerConfiguration(maximumBodyBytes: 1_000)) { _, client in
            let cases: [(body: Data, id: String?, status: Int, code: String)] = [
                (Data(#"{"text": "a"}"#.utf8), nil, 400, "missingMutationID"),
                (Data(#"{"text": "a"}"#.utf8), "", 400, "invalidMutationID"),
                (Data(#"{"text": "a"}"#.utf8), "no-sequence", 400, "invalidMutationID"),
                (Data(#"{"text": "a"}"#.utf8), String(repeating: "x", count: 63) + ":1", 400, "invalidMutationID"),
                (Data(#"{"text": "a"}"#.utf8), "c 5:1", 400, "invalidMutationID"),
                (Data("{not json".utf8), "c5:1", 400, "badRequest"),
                (Data(#"{"text": 7}"#.utf8), "c5:2", 400, "badRequest"),
                (Data(#"{}"#.utf8), "c5:3", 400, "badRequest"),
                (Data(repeating: UInt8(ascii: " "), count: 10_000), "c5:4", 413, "bodyTooLarge"),
            ]
            for (body, id, status, code) in cases {
                let answer = try await client.send("POST", "me/notes", as: "ann", body: body, mutationID: id)
                #expect(answer.status == status, "\(code): \(String(decoding: answer.body, as: UTF8.self))")
                #expect(TestClient.errorCode(answer.body) == code)
            }
            let typeError = try await client.send("POST", "me/notes", as: "ann", body: Data(#"{"text": 7}"#.utf8), mutationID: "c5:9")
            #expect(String(decoding: typeError.body, as: UTF8.self).contains("text"))
            #expect(try await client.send("GET", "me/notes", as: "ann").status == 404)
            let nowhere = try await client.send("GET", "nowhere", as: "ann")
            #expect(nowhere.status == 404 && TestClient.errorCode(nowhere.body) == "notFound")
            // A declared path asked with another method: 405, saying which methods it answers.
            for (method, path) in [("DELETE", "me/notes"), ("PUT", "board"), ("PATCH", "users/bob/notes")] {
                let answer = try await client.send(method, path, as: "ann")
                #expect(answer.status == 405, "\(method) \(path)")
                #expect(TestClient.errorCode(answer.body) == "methodNotAllowed")
            }
        }
    }
}
