import Foundation
import StateLoop
import StateLoopJournal

/// The README's journal example, compiled.
enum ReadmeJournal {
    struct Chunk: Codable, Sendable, Equatable {
        var index: Int
    }

    struct Upload: Codable, Sendable {
        var nextChunk: Chunk?

        static func reduce(_ state: inout Upload, _ event: UploadEvent) {
            if case .sent(let chunk) = event { state.nextChunk = Chunk(index: chunk.index + 1) }
        }
    }

    enum UploadEvent: Codable, Sendable {
        case sent(Chunk)
        case failed(String)
    }

    struct API: Sendable {
        var send: @Sendable (Chunk) async throws -> Chunk
    }

    @MainActor
    static func sample(appSupport: String, api: API) throws {
        // README.md:
        let journal = try Journal<Upload, UploadEvent>(at: appSupport + "/upload.journal")
        let uploads = System(
            journal: journal, initialState: Upload(), reduce: Upload.reduce,
            feedbacks: [
                .react(query: \.nextChunk) { chunk in
                    .sent(try await api.send(chunk))
                } catch: {
                    .failed("\($0)")
                }
            ])
        // End of the example.
        _ = uploads
    }
}
