import Foundation
import Hummingbird

/// The page's three files, read from the module's resources once, at start.
struct PageFiles: Sendable {
    enum File: String, CaseIterable, Sendable {
        case index = "index.html"
        case script = "inspector.js"
        case style = "inspector.css"

        var contentType: String {
            switch self {
            case .index: "text/html; charset=utf-8"
            case .script: "text/javascript; charset=utf-8"
            case .style: "text/css; charset=utf-8"
            }
        }
    }

    private let contents: [File: Data]

    /// - Throws: ``Missing`` when a file is not in the bundle.
    init() throws {
        var contents: [File: Data] = [:]
        for file in File.allCases {
            let name = (file.rawValue as NSString).deletingPathExtension
            let ext = (file.rawValue as NSString).pathExtension
            guard let url = Bundle.module.url(forResource: name, withExtension: ext, subdirectory: "Resources"), let data = try? Data(contentsOf: url)
            else {
                throw Missing(file: file.rawValue)
            }
            contents[file] = data
        }
        self.contents = contents
    }

    func response(for file: File) -> Response {
        Response(
            status: .ok,
            headers: [.contentType: file.contentType, .cacheControl: "no-store"],
            body: .init(byteBuffer: .init(data: contents[file] ?? Data()))
        )
    }

    /// A page file missing from the bundle.
    struct Missing: Error, CustomStringConvertible {
        let file: String
        var description: String { "the inspector's page file \(file) is missing from its resources: rebuild the package" }
    }
}
