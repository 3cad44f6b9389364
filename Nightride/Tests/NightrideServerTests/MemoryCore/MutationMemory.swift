import NightrideModel
import StateLoopWire

@testable import NightrideServer

/// What the in-memory core remembers of one user's mutations, for idempotence: the answer to
/// each id. (The server's own memory of answers is StateLoopServer's, in its store; this one
/// keeps ``RulesOracle`` a whole server in memory for the rules' tests.)
struct MutationMemory: Sendable {
    /// Answers to mutations by client mutation id, with the change each id was used for.
    var answers: [String: CoreAnswer] = [:]
    /// Per client, the sequence numbers whose answers are remembered, in order.
    private var clientAnswers: [String: [(sequence: UInt64, id: String)]] = [:]
    /// Ids of no client's numbering, in the order they came, to forget the oldest first.
    private var otherAnswers: [String] = []

    /// Remembers the answer to `mutationID`, and forgets what no retry can ask for any more: a
    /// client sends its mutations one at a time, in order, each until it is answered, so its
    /// mutation N means it has the answers before N. Ids outside a client's numbering are kept
    /// up to `limit`, oldest forgotten first.
    mutating func remember(_ answer: Result<Version, RideRefusal>, to change: String, for mutationID: String, limit: Int) {
        answers[mutationID] = CoreAnswer(change: change, answer: answer)
        guard let (client, sequence) = MutationID(rawValue: mutationID).parts else {
            otherAnswers.append(mutationID)
            if otherAnswers.count > limit {
                answers[otherAnswers.removeFirst()] = nil
            }
            return
        }
        var remembered = clientAnswers[client.rawValue, default: []]
        let answered = remembered.prefix { $0.sequence < sequence }
        for old in answered { answers[old.id] = nil }
        remembered.removeFirst(answered.count)
        // In order of sequence, even if a client's ids come out of order.
        let position = remembered.firstIndex { $0.sequence > sequence } ?? remembered.endIndex
        remembered.insert((sequence, mutationID), at: position)
        clientAnswers[client.rawValue] = remembered
    }
}

/// The answer the in-memory core gave to a mutation id, and the change it answered (route and
/// body). Not the kit's `RememberedAnswer`, which keeps an HTTP answer's bytes.
struct CoreAnswer: Sendable {
    let change: String
    let answer: Result<Version, RideRefusal>
}
