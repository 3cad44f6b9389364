import Foundation
import StateLoopWire
import Testing

/// The JSON StateLoop reads by hand (a row's fields, a collection message's envelope) must read
/// exactly as `JSONDecoder` reads it, or give up so that `JSONDecoder` does.
@Suite struct HandReadJSONTests {
    struct Task: Codable, Sendable, Hashable {
        var id: String
        var title: String
        var position: Int
        var tags: [String] = []
    }

    @Test func fieldsReadBackAsWritten() throws {
        let samples: [[String: FieldValue]] = [
            [:],
            ["position": .integer(-42), "done": .bool(true), "projectID": .text("p1")],
            ["score": .real(0.5), "big": .integer(.max), "small": .integer(.min), "none": .null],
            ["title": .text("quote \" backslash \\ slash / tab \t newline \n unicode é 🚲")],
            ["exponent": .real(1.5e300), "negative": .real(-0.25)],
        ]
        for fields in samples {
            let text = FieldsJSON.encode(fields)
            #expect(FieldsJSON.decode(text) == fields, "\(text)")
            // What JSONDecoder reads from the same text.
            #expect(try JSONDecoder().decode([String: FieldValue].self, from: Data(text.utf8)) == fields)
            // And what JSONEncoder wrote (the server's older rows), read by hand.
            let encoded = String(decoding: try JSONEncoder().encode(fields), as: UTF8.self)
            #expect(FieldsJSON.decode(encoded) == fields, "\(encoded)")
        }
        // PostgreSQL's jsonb text has spaces.
        #expect(
            FieldsJSON.decode(#"{"a": 1, "b": "x", "c": null, "d": false}"#) == ["a": .integer(1), "b": .text("x"), "c": .null, "d": .integer(0)])
        // A control character is escaped as \u, which the hand reader leaves to JSONDecoder.
        let control = FieldsJSON.encode(["bell": .text("\u{07}")])
        #expect(FieldsJSON.decode(control) == nil)
        #expect(try JSONDecoder().decode([String: FieldValue].self, from: Data(control.utf8)) == ["bell": .text("\u{07}")])
        // Anything else is not taken.
        for odd in [#"{"a":{"b":1}}"#, #"{"a":[1]}"#, #"{"a":1"#, #"{"a":1} x"#, #"["a"]"#, #"{"a":nul}"#, ""] {
            #expect(FieldsJSON.decode(odd) == nil, "\(odd)")
        }
    }

    @Test func aMessageReadByHandEqualsJSONDecoders() throws {
        let messages = [
            #"{"cookie":"1.5.00000000000000aa","replace":true,"rows":[{"id":"t1","version":{"epoch":1,"counter":3},"value":{"id":"t1","title":"A, \"b\" [c] {d}","position":1,"tags":["x","y"]}}],"removed":[],"lastMutationID":12}"#,
            #"{"cookie":"1.6.00000000000000aa","replace":false,"rows":[],"removed":["t1","t\/2"]}"#,
            // Spaces, another order of keys, a key the client does not know.
            #" { "rows" : [ { "value" : { "title" : "é", "position" : -3, "id" : "t9", "tags" : [ ] } , "version" : { "counter" : 4 , "epoch" : 2 } , "id" : "t9" } ] , "later" : {"x": [1, {"y": "}"}]}, "cookie" : "2.1.00000000000000aa" , "replace" : false , "removed" : [ ] , "lastMutationID" : null } "#,
        ]
        for message in messages {
            let data = Data(message.utf8)
            let byHand = try RowsDifference<Task>.decode(message: data)
            #expect(byHand == (try JSONDecoder().decode(RowsDifference<Task>.self, from: data)), "\(message)")
            let encoded = try #require(byHand.encoded, "the hand reader gave up on \(message)")
            // Each value's bytes, as sent, decode to the row.
            for (index, row) in byHand.rows.enumerated() {
                #expect(try JSONDecoder().decode(Task.self, from: encoded[index]) == row.value)
            }
        }
        // A \u escape in an id: JSONDecoder reads it, the same difference.
        let escaped = Data(#"{"cookie":"c","replace":false,"rows":[],"removed":["t\u0031"]}"#.utf8)
        let fallback = try RowsDifference<Task>.decode(message: escaped)
        #expect(fallback.removed == ["t1"])
        #expect(fallback.encoded == nil)
        // A message JSONDecoder refuses is refused.
        #expect(throws: (any Error).self) { try RowsDifference<Task>.decode(message: Data(#"{"replace":true}"#.utf8)) }
        #expect(throws: (any Error).self) {
            try RowsDifference<Task>.decode(
                message: Data(
                    #"{"cookie":"c","replace":true,"rows":[{"id":"t","version":{"epoch":1,"counter":1},"value":{"id":3}}],"removed":[]}"#.utf8))
        }
    }

    /// A message of more rows than one decoding pass takes (the values are decoded a batch at
    /// a time): every row in order, with its own bytes, and a value that does not decode in a
    /// later batch refuses the message.
    @Test func manyRowsAreDecodedInBatches() throws {
        let count = RowsDifference<Task>.valuesPerPass * 2 + 7
        let rows = (0..<count).map { index in
            VersionedRow(
                id: "t\(index)", version: Version(epoch: 1, counter: UInt64(index + 1)),
                value: Task(id: "t\(index)", title: "task \(index)", position: index, tags: index % 2 == 0 ? ["even"] : []))
        }
        let sent = RowsDifference(cookie: "1.9.00000000000000aa", replace: true, rows: rows, removed: [])
        let data = try JSONEncoder().encode(sent)
        let read = try RowsDifference<Task>.decode(message: data)
        #expect(read == sent)
        let encoded = try #require(read.encoded)
        for index in [0, RowsDifference<Task>.valuesPerPass, count - 1] {
            #expect(try JSONDecoder().decode(Task.self, from: encoded[index]) == rows[index].value)
        }
        var broken = String(decoding: data, as: UTF8.self)
        broken = broken.replacingOccurrences(of: "\"title\":\"task \(count - 1)\"", with: #""title":17"#)
        #expect(broken.contains(#""title":17"#))
        #expect(throws: DecodingError.self) { try RowsDifference<Task>.decode(message: Data(broken.utf8)) }
    }

    /// What JSONDecoder reads differently or refuses, the hand reader leaves to it: the same
    /// result, or the same refusal.
    @Test func whatTheHandReaderLeavesToJSONDecoder() throws {
        let messages = [
            // A key twice (JSONDecoder keeps the first).
            #"{"cookie":"a","cookie":"b","replace":false,"rows":[],"removed":[]}"#,
            #"{"cookie":"a","replace":false,"rows":[{"id":"t1","id":"t2","version":{"epoch":1,"counter":1},"value":{"id":"t1","title":"x","position":1,"tags":[]}}],"removed":[]}"#,
            // A key JSONDecoder requires, missing.
            #"{"cookie":"a","replace":false,"rows":[]}"#,
            // Numbers JSON does not allow.
            #"{"cookie":"a","replace":false,"rows":[],"removed":[],"lastMutationID":+1}"#,
            #"{"cookie":"a","replace":false,"rows":[],"removed":[],"lastMutationID":01}"#,
            #"{"cookie":"a","replace":false,"rows":[{"id":"t","version":{"epoch":1,"counter":.5},"value":{}}],"removed":[]}"#,
        ]
        for message in messages {
            let data = Data(message.utf8)
            let byHand = Result { try RowsDifference<Task>.decode(message: data) }
            let decoded = Result { try JSONDecoder().decode(RowsDifference<Task>.self, from: data) }
            switch (byHand, decoded) {
            case (.success(let a), .success(let b)):
                #expect(a == b, "\(message)")
                #expect(a.encoded == nil, "read by hand: \(message)")
            case (.failure, .failure): break
            default: Issue.record("\(message): by hand \(byHand), JSONDecoder \(decoded)")
            }
        }
        // Fields: a name twice, a whole number written as a real, a number JSON does not allow.
        for text in [#"{"a":1,"a":2}"#, #"{"a":3.0}"#, #"{"a":1e+16}"#, #"{"a":-0.0}"#, #"{"a":01}"#, #"{"a":+1}"#, #"{"a":.5}"#] {
            #expect(FieldsJSON.decode(text) == nil, "\(text)")
        }
        #expect(FieldsJSON.decode(#"{"a":2.5,"b":-7,"c":1e400}"#) == nil)
        #expect(FieldsJSON.decode(#"{"a":2.5,"b":-7,"c":1.5e300}"#) == ["a": .real(2.5), "b": .integer(-7), "c": .real(1.5e300)])
    }

    /// Rows the app changes after decoding lose the kept bytes: stored, they would put one row's
    /// JSON under another's id.
    @Test func changedRowsLoseTheKeptBytes() throws {
        let message =
            #"{"cookie":"c","replace":true,"rows":[{"id":"a","version":{"epoch":1,"counter":1},"value":{"id":"a","title":"A","position":1,"tags":[]}},{"id":"b","version":{"epoch":1,"counter":1},"value":{"id":"b","title":"B","position":2,"tags":[]}}],"removed":[]}"#
        var difference = try RowsDifference<Task>.decode(message: Data(message.utf8))
        #expect(difference.encoded != nil)
        difference.rows.reverse()
        #expect(difference.encoded == nil)
        var renamed = try RowsDifference<Task>.decode(message: Data(message.utf8))
        renamed.rows[0].value.title = "changed"
        #expect(renamed.encoded == nil)
    }

    @Test func quotedStringsReadBack() throws {
        for text in ["", "plain", "a\"b", "back\\slash", "new\nline", "\u{01}\u{1f}", "é 🚲", "/"] {
            let quoted = JSONBytes.quoted(text)
            #expect(try JSONDecoder().decode(String.self, from: Data(quoted.utf8)) == text, "\(quoted)")
        }
    }
}
