import Foundation

/// The executable product `name`, built beside the test bundle (a test target that depends on
/// an executable target gets it built there).
///
/// - Throws: ``ProductNotFound`` naming the folders searched.
public func builtProduct(named name: String) throws -> URL {
    let candidates = [
        Bundle.main.executableURL?.deletingLastPathComponent(),
        Bundle.main.bundleURL.deletingLastPathComponent(),
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent(),
    ].compactMap { $0 }
    for folder in candidates {
        for parent in [folder, folder.deletingLastPathComponent(), folder.deletingLastPathComponent().deletingLastPathComponent()] {
            let url = parent.appendingPathComponent(name)
            var isFolder: ObjCBool = false
            if FileManager.default.fileExists(atPath: url.path, isDirectory: &isFolder), !isFolder.boolValue,
                FileManager.default.isExecutableFile(atPath: url.path)
            {
                return url
            }
        }
    }
    throw ProductNotFound(name: name, searched: candidates.map(\.path))
}

/// An executable product missing from the build folder.
public struct ProductNotFound: Error, CustomStringConvertible {
    /// The product looked for.
    public let name: String
    /// The folders searched.
    public let searched: [String]

    public var description: String {
        "\(name) was not found beside the tests (searched \(searched)); build it with `swift build --build-tests`."
    }
}
